"""Charts drawn by the service as SVG text, so that a page shows them as an image with no
chart library in the browser: the tickets sold per day of a sales report, the arrivals per
hour of the day. It knows nothing of HTTP or the store: it draws the numbers it is given.
"""

from xml.sax.saxutils import escape

WIDTH, HEIGHT = 640, 240
MARGIN_LEFT, MARGIN_BOTTOM, MARGIN_TOP = 40, 40, 24
BAR_MAX = 48  # a bar's width at most: a window of one day draws no wall


def sales_per_day_svg(rows):
    """An SVG bar chart of the tickets sold and not void on each day of `rows` (the sales
    report's rows: a day may have several, one per event), each bar labelled with its
    count and its day; an empty report draws its axis and says so."""
    per_day = {}
    for row in rows:
        per_day[row["date"]] = per_day.get(row["date"], 0) + row["sold"] - row["void"]
    bars = [(day[5:], per_day[day], f"{day}: {per_day[day]}") for day in sorted(per_day)]
    return bar_chart_svg("Tickets sold per day", bars, "No tickets sold")


def arrivals_per_hour_svg(title, arrivals, places=None, note=""):
    """An SVG bar chart of `arrivals` ({hour of the day: admissions}), one bar for each hour
    from the first to the last that has arrivals or places; `places` ({hour: places of
    the entry slots starting in it}) marks each hour's capacity with a dashed line. Its
    description lists every bar, for a reader that cannot see it, and ends with `note`."""
    places = places or {}
    hours = sorted({*arrivals, *places})
    span = range(hours[0], hours[-1] + 1) if hours else ()
    bars, marks, said = [], {}, []
    for hour in span:
        label, came = f"{hour:02d}:00", arrivals.get(hour, 0)
        of_places = f" of {places[hour]} places" if hour in places else ""
        bars.append((label, came, f"{label}: {came} arrived{of_places}"))
        said.append(f"{label} {came} arrived{of_places}")
        if hour in places:
            marks[label] = places[hour]
    description = "; ".join(said) or "No arrivals"
    return bar_chart_svg(title, bars, "No arrivals", f"{description}. {note}".strip(), marks)


def bar_chart_svg(title, bars, empty_text, description="", marks=None):
    """An SVG chart titled `title` of `bars`, (label, count, tooltip) in order, each bar
    labelled with its count and its label; `marks` ({label: value}) draws a dashed line
    across that label's bar at the value (a capacity), `description` is the chart's
    <desc>; with no bars it draws its axis and says `empty_text`."""
    marks = marks or {}
    tallest = max([count for _, count, _ in bars] + list(marks.values()), default=0) or 1
    plot_height = HEIGHT - MARGIN_BOTTOM - MARGIN_TOP
    step = (WIDTH - MARGIN_LEFT) / max(len(bars), 1)
    width = min(step * 0.7, BAR_MAX)
    parts = [f'<line x1="{MARGIN_LEFT}" y1="{HEIGHT - MARGIN_BOTTOM}" x2="{WIDTH}" '
             f'y2="{HEIGHT - MARGIN_BOTTOM}" stroke="#111827"/>']
    for index, (label, count, tooltip) in enumerate(bars):
        height = count / tallest * plot_height
        x = MARGIN_LEFT + index * step + (step - width) / 2
        y = HEIGHT - MARGIN_BOTTOM - height
        middle = x + width / 2
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
                     f'height="{height:.1f}" fill="#1d4ed8"><title>{escape(tooltip)}'
                     '</title></rect>')
        parts.append(f'<text x="{middle:.1f}" y="{y - 4:.1f}" text-anchor="middle">'
                     f'{count}</text>')
        parts.append(f'<text x="{middle:.1f}" y="{HEIGHT - MARGIN_BOTTOM + 16}" '
                     f'text-anchor="middle">{escape(label)}</text>')
        if label in marks:
            mark_y = HEIGHT - MARGIN_BOTTOM - marks[label] / tallest * plot_height
            parts.append(f'<line class="capacity" x1="{x - 3:.1f}" y1="{mark_y:.1f}" '
                         f'x2="{x + width + 3:.1f}" y2="{mark_y:.1f}" stroke="#b91c1c" '
                         f'stroke-width="2" stroke-dasharray="4 2"><title>{escape(label)}: '
                         f'{marks[label]} places</title></line>')
    if not bars:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
                     f'{escape(empty_text)}</text>')
    desc = f"<desc>{escape(description)}</desc>" if description else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'width="{WIDTH}" height="{HEIGHT}" role="img" font-family="sans-serif" '
            f'font-size="12"><title>{escape(title)}</title>{desc}'
            f'<text x="{MARGIN_LEFT}" y="14" font-weight="bold">{escape(title)}</text>'
            + "".join(parts) + "</svg>")
