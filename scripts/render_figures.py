"""Render the README's evaluation figures to PNG with the app's own plotly figures and headless Chromium.

    python scripts/render_figures.py judge REPORT.json docs/judge-heatmap.png [--title TEXT]
    python scripts/render_figures.py loss ROWS.json docs/loss-funnel.png [--title TEXT]

``judge``: the win-rate heatmaps of a report written by ``python -m core judge --json`` (or ``--out``).
``loss``: the evidence-loss stage shares and funnel of the rows written by ``python -m core eval
--per-question ROWS.json``. The page embeds plotly.js (no network) and is photographed by Playwright
driving /usr/bin/chromium.
"""
from __future__ import annotations

import argparse
import html
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def _figures(kind: str, source: Path) -> list:
    data = json.loads(source.read_text(encoding="utf-8"))
    if kind == "judge":
        from core.judge.report import JudgeReport
        from ui.judge_view import win_rate_figure

        report = JudgeReport.from_dict(data)
        return [win_rate_figure(report, criterion) for criterion in report.criteria]
    from ui.loss_view import counts_by_mode, funnel_figure, stage_share_figure

    counts = counts_by_mode([r for r in data if r.get("evidence_loss")])
    return [stage_share_figure(counts, "Gold documents by stage"), funnel_figure(counts, "Funnel over the question set")]


def render(kind: str, source: Path, out: Path, title: str, width: int = 1100) -> None:
    from playwright.sync_api import sync_playwright

    figures = _figures(kind, source)
    cells = []
    for i, fig in enumerate(figures):
        fig.update_layout(width=width // 2 - 20)
        cells.append(f'<div class="cell">{fig.to_html(full_html=False, include_plotlyjs=(i == 0))}</div>')
    page = (f"<html><head><meta charset='utf-8'><style>body{{font-family:sans-serif;margin:12px;width:{width}px}}"
            f".grid{{display:flex;flex-wrap:wrap;gap:8px}}.cell{{width:{width // 2 - 12}px}}</style></head><body>"
            f"<h3>{html.escape(title)}</h3><div class='grid'>{''.join(cells)}</div></body></html>")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "figures.html"
        path.write_text(page, encoding="utf-8")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            tab = browser.new_page(viewport={"width": width + 24, "height": 600})
            tab.goto(path.as_uri())
            tab.wait_for_function("document.querySelectorAll('.main-svg').length > 0")
            tab.wait_for_timeout(500)
            out.parent.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(out), full_page=True)
            browser.close()
    print(f"wrote {out}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["judge", "loss"])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    render(args.kind, args.source, args.out, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
