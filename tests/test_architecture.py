"""The house's plan, read from the code's own imports (docs/architecture.md draws it): no
module imports one that imports it, no circle of any length, no chain of imports from
museum.py down longer than five modules, and every module on the floor the page gives it,
importing only modules of lower floors. A package (storage/, museum_pages/) is one module
here: what it imports inside itself is its own affair. Imports made inside a function
count too: they tie the modules as much as those at the top."""

import ast
import functools
import re

from serving import ROOT

LONGEST_CHAIN_FROM_THE_APP = 5  # museum.py and four below it


def service_modules():
    """{module name: its file(s)}: each top-level module, and each package as one."""
    modules = {path.stem: [path] for path in ROOT.glob("*.py")}
    for init in ROOT.glob("*/__init__.py"):
        if init.parent.name != "tests":
            modules[init.parent.name] = sorted(init.parent.glob("*.py"))
    return modules


def imported_names(path):
    """Every module name an import in `path` names, wherever the import stands."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module


@functools.cache
def import_graph():
    """{module: the set of the service's modules it imports}."""
    modules = service_modules()
    graph = {}
    for name, paths in modules.items():
        imported = {each.partition(".")[0] for path in paths for each in imported_names(path)}
        graph[name] = {each for each in imported if each in modules and each != name}
    return graph


def longest_chain(graph, start):
    """The longest chain of imports from `start` (the graph has no circle)."""
    chains = [longest_chain(graph, each) for each in sorted(graph[start])]
    return [start, *max(chains, key=len, default=[])]


def circles(graph):
    """Each circle of imports found, as the modules along it back to the first."""
    found = []

    def walk(module, path):
        for each in sorted(graph[module]):
            if each in path:
                found.append(path[path.index(each):] + [each])
            elif each not in done:
                walk(each, path + [each])
        done.add(module)

    done = set()
    for module in sorted(graph):
        if module not in done:
            walk(module, [module])
    return found


def test_the_graph_is_read_from_the_code():
    graph = import_graph()
    assert {"museum", "museum_config", "storage", "museum_vocabulary"} <= graph.keys()
    assert "museum_config" in graph["museum"] and "storage" in graph["museum_http"]


def test_no_module_imports_one_that_imports_it():
    graph = import_graph()
    assert [(first, second) for first in graph for second in graph[first]
            if first < second and first in graph[second]] == []


def test_no_circle_of_imports():
    assert circles(import_graph()) == []


def test_a_circle_would_be_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_chain_from_the_app_down_is_longer_than_five_modules():
    chain = longest_chain(import_graph(), "museum")
    assert len(chain) <= LONGEST_CHAIN_FROM_THE_APP, " -> ".join(chain)


def test_the_vocabulary_imports_nothing_of_the_service():
    """Any module may take a shared word from it, so it may take none from another."""
    graph = import_graph()
    assert graph["museum_vocabulary"] == set()
    assert graph["museum_credentials"] == set()


def test_storage_knows_nothing_of_the_modules_above_it():
    assert import_graph()["storage"] == set()


def documented_floors():
    """{module: floor} as docs/architecture.md lists them ("- floor 2: a, b")."""
    floors = {}
    text = (ROOT / "docs" / "architecture.md").read_text()
    for floor, names in re.findall(r"^- floor (\d): (.+)$", text, re.MULTILINE):
        floors.update((name.strip(), int(floor)) for name in names.split(","))
    return floors


def test_every_module_stands_on_the_floor_the_architecture_page_gives_it():
    floors = documented_floors()
    graph = import_graph()
    assert sorted(graph.keys() - floors.keys()) == [], "add them to docs/architecture.md"
    assert sorted(floors.keys() - graph.keys()) == [], "no such modules"
    assert [f"{module} (floor {floors[module]}) imports {each} (floor {floors[each]})"
            for module in sorted(graph) for each in sorted(graph[module])
            if floors[each] >= floors[module]] == []
