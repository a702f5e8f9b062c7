#!/usr/bin/env bash
# screen_png.py: a capture's text and colours become cells of the PNG, in place.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)
scratch tmp
python3 -c "import PIL, matplotlib" 2>/dev/null || { echo "no PIL or matplotlib: skipped"; exit 77; }
printf 'ab\033[41m  \033[0mc\n\033[1;32mG\033[0m \033[7mR\033[0m \033[38;5;196mX\033[48;2;0;0;255m \033[0m\n' >"$tmp/cap.ansi"
python3 "$here/tools/ember-top/screen_png.py" "$tmp/cap.ansi" "$tmp/cap.png"
python3 - "$tmp/cap.png" <<'PY'
import sys
from PIL import Image
img = Image.open(sys.argv[1]).convert("RGB")
W, H = img.size
cols, rows, pad = 6, 2, 8  # the widest line: "G R X "
cw, ch = (W - 2 * pad) / cols, (H - 2 * pad) / rows
def centre(x, y):
    return img.getpixel((int(pad + (x + 0.5) * cw), int(pad + (y + 0.5) * ch)))
def near(p, q, tol=40):
    return all(abs(a - b) <= tol for a, b in zip(p, q))
assert near(centre(2, 0), (205, 0, 0)) and near(centre(3, 0), (205, 0, 0)), "a red background cell"
assert near(centre(5, 1), (0, 0, 255)), "a 24-bit blue background cell"
assert near(centre(5, 0), (0, 0, 0), 10), "past the end of a line: the default background"
box = [img.getpixel((x, y)) for x in range(int(pad + 2 * cw), int(pad + 3 * cw)) for y in range(int(pad + ch), int(pad + 2 * ch))]
assert any(near(p, (229, 229, 229)) for p in box), "reverse video: the light default foreground fills the cell"
print("screen_png: ok")
PY
# a missing capture is one clear line and a failure
if python3 "$here/tools/ember-top/screen_png.py" "$tmp/none.ansi" "$tmp/x.png" 2>"$tmp/err"; then exit 1; fi
grep -q "screen_png: " "$tmp/err"
