#!/usr/bin/env python3
"""A terminal screen, as `tmux capture-pane -e -p` writes it, drawn as a PNG.

    screen_png.py CAPTURE.ansi OUT.png [--title TEXT]

The capture keeps the screen's colours as SGR escapes (ESC [ ... m): the
eight colours and their bright forms, 256-colour and 24-bit colours,
bold and reverse. Other escapes are dropped. Cells are drawn in DejaVu
Sans Mono (matplotlib's copy), so no system font is needed.
"""
import argparse
import re
import sys

from matplotlib import font_manager
from PIL import Image, ImageDraw, ImageFont

# xterm's default palette
BASIC = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
         (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255),
         (255, 0, 255), (0, 255, 255), (255, 255, 255)]
FG, BG = (229, 229, 229), (0, 0, 0)
# an SGR sequence (group 1 its codes), or another escape, dropped
ESCAPE = re.compile(r"\x1b\[([0-9;:]*)m|\x1b\[[0-9;:?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]")


def colour256(n):
    if n < 16:
        return BASIC[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


class Pen:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg, self.bg, self.bold, self.reverse = None, None, False, False

    def apply(self, codes):
        nums = [int(c) if c else 0 for c in re.split("[;:]", codes)] if codes else [0]
        i = 0
        while i < len(nums):
            c = nums[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 22:
                self.bold = False
            elif c == 7:
                self.reverse = True
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37:
                self.fg = BASIC[c - 30]
            elif 90 <= c <= 97:
                self.fg = BASIC[c - 90 + 8]
            elif 40 <= c <= 47:
                self.bg = BASIC[c - 40]
            elif 100 <= c <= 107:
                self.bg = BASIC[c - 100 + 8]
            elif c == 39:
                self.fg = None
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(nums):
                if nums[i + 1] == 5 and i + 2 < len(nums):
                    rgb = colour256(nums[i + 2])
                    i += 2
                elif nums[i + 1] == 2 and i + 4 < len(nums):
                    rgb = tuple(nums[i + 2:i + 5])
                    i += 4
                else:
                    rgb = None
                if rgb is not None:
                    if c == 38:
                        self.fg = rgb
                    else:
                        self.bg = rgb
            i += 1

    def colours(self):
        fg, bg = self.fg or FG, self.bg or BG
        if self.bold and self.fg in BASIC[:8]:
            fg = BASIC[BASIC.index(self.fg) + 8]
        return (bg, fg) if self.reverse else (fg, bg)


def cells(text):
    """Each line as a list of (character, foreground, background)."""
    pen, rows = Pen(), []
    for line in text.split("\n"):
        row, at = [], 0
        for m in ESCAPE.finditer(line):
            row += [(ch, *pen.colours()) for ch in line[at:m.start()]]
            if m.group(0).endswith("m") and m.group(0).startswith("\x1b["):
                pen.apply(m.group(1))
            at = m.end()
        row += [(ch, *pen.colours()) for ch in line[at:]]
        rows.append(row)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def draw(rows, title, size=15):
    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans Mono"), size)
    left, top, right, bottom = font.getbbox("M")
    cw, ch = int(font.getlength("M") + 0.5), int((bottom - top) * 1.45 + 0.5)
    pad, head = 8, (ch + 6 if title else 0)
    width = max((len(r) for r in rows), default=1)
    img = Image.new("RGB", (2 * pad + width * cw, 2 * pad + head + len(rows) * ch), BG)
    d = ImageDraw.Draw(img)
    if title:
        d.text((pad, pad), title, font=font, fill=(160, 160, 160))
    for y, row in enumerate(rows):
        for x, (c, fg, bg) in enumerate(row):
            px, py = pad + x * cw, pad + head + y * ch
            if bg != BG:
                d.rectangle([px, py, px + cw - 1, py + ch - 1], fill=bg)
            if c != " ":
                d.text((px, py + (ch - (bottom - top)) // 2 - top), c, font=font, fill=fg)
    return img


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        with open(a.capture, encoding="utf-8", errors="replace") as f:
            rows = cells(f.read())
    except OSError as e:
        sys.exit(f"screen_png: {e}")
    if not rows:
        sys.exit(f"screen_png: {a.capture} holds no screen")
    draw(rows, a.title).save(a.out)


if __name__ == "__main__":
    main()
