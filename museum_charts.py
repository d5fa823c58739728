"""Charts drawn by the service as SVG text, so that a page shows them as an image with no
chart library in the browser: the tickets sold per day of a sales report. It knows
nothing of HTTP or the store: it draws the numbers it is given.
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
    days = sorted(per_day)
    tallest = max(per_day.values(), default=0) or 1
    plot_height = HEIGHT - MARGIN_BOTTOM - MARGIN_TOP
    step = (WIDTH - MARGIN_LEFT) / max(len(days), 1)
    parts = [f'<line x1="{MARGIN_LEFT}" y1="{HEIGHT - MARGIN_BOTTOM}" x2="{WIDTH}" '
             f'y2="{HEIGHT - MARGIN_BOTTOM}" stroke="#111827"/>']
    for index, day in enumerate(days):
        height = per_day[day] / tallest * plot_height
        width = min(step * 0.7, BAR_MAX)
        x = MARGIN_LEFT + index * step + (step - width) / 2
        y = HEIGHT - MARGIN_BOTTOM - height
        middle = x + width / 2
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
                     f'height="{height:.1f}" fill="#1d4ed8"><title>{escape(day)}: '
                     f'{per_day[day]}</title></rect>')
        parts.append(f'<text x="{middle:.1f}" y="{y - 4:.1f}" text-anchor="middle">'
                     f'{per_day[day]}</text>')
        parts.append(f'<text x="{middle:.1f}" y="{HEIGHT - MARGIN_BOTTOM + 16}" '
                     f'text-anchor="middle">{escape(day[5:])}</text>')
    if not days:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
                     'No tickets sold</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'width="{WIDTH}" height="{HEIGHT}" role="img" font-family="sans-serif" '
            'font-size="12"><title>Tickets sold per day</title>'
            f'<text x="{MARGIN_LEFT}" y="14" font-weight="bold">Tickets sold per day</text>'
            + "".join(parts) + "</svg>")
