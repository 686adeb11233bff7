#!/usr/bin/python3
"""Checks headless Chromium's screenshots of scaletwin's HTML pages (tests/report/render_check.sh).

Usage: render_check.py SHOT.png [SHOT.png ...]
A page rendered: more than 1% of its pixels are not white (text, tables, charts), and its charts drew their first
series: at least 150 pixels within 24 of the first palette colour #1f77b4 (report/html.cpp kPalette) per channel.
Exit 1 naming the screenshot and what is missing."""
import sys

from PIL import Image

SERIES = (0x1F, 0x77, 0xB4)
failed = False
for path in sys.argv[1:]:
    image = Image.open(path).convert("RGB")
    pixels = list(image.getdata())
    ink = sum(1 for p in pixels if min(p) < 235) / len(pixels)
    series = sum(1 for p in pixels if all(abs(a - b) <= 24 for a, b in zip(p, SERIES)))
    ok = ink > 0.01 and series >= 150
    print(f"{path}: {image.size[0]}x{image.size[1]}, {100 * ink:.1f}% ink, {series} pixels of the first series"
          f"{'' if ok else '  <- FAIL'}")
    failed = failed or not ok
sys.exit(1 if failed else 0)
