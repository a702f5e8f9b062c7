#!/bin/bash
# Ember's margins in the model, at fixed seeds with a 16 GiB budget, run
# through the shim's own policy core: the static split and the adaptive
# policy against stock UVM and the mapped baseline.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# At 1.5x, static is at least 5x faster than stock UVM on random and strided access.
for w in random strided reread; do
	u=$(run $w 24G uvm); s=$(run $w 24G static)
	r=$(calc "$(field "$u" sim_seconds)/$(field "$s" sim_seconds)")
	echo "$w 1.5x: uvm $(field "$u" sim_seconds)s, static $(field "$s" sim_seconds)s, x$r"
	check "$r >= 5" "$w: static is at least 5x faster than stock UVM at 1.5x"
done

# Static never does worse than mapped on streaming re-reads, and keeps residency
# under the budget's high watermark (the shim's default, read from its options table).
high=$(sed -n 's/.*EMBER_HIGH_WATERMARK, PERCENT, "\([0-9]*\)".*/\1/p' "$(dirname "$0")/../../shim/config/config.def")
for ws in 8G 24G 64G; do
	m=$(run reread $ws mapped); s=$(run reread $ws static)
	check "$(field "$s" sim_seconds) <= $(field "$m" sim_seconds) * 1.01" "reread $ws: static no slower than mapped"
	check "$(field "$s" bytes_promoted) <= 17179869184 * $high / 100" "reread $ws: promoted within the high watermark"
done

# Below the budget, static makes everything resident and demotes nothing.
s=$(run reread 8G static)
check "$(field "$s" bytes_promoted) == 8589934592 && $(field "$s" bytes_demoted) == 0" "reread 0.5x: all of it promoted once"

# Adaptive follows a phase shift that static cannot: A then B, each alone fitting.
a=$(run phase 24G adaptive); s=$(run phase 24G static)
check "$(field "$a" sim_seconds) < $(field "$s" sim_seconds)" "phase 1.5x: adaptive beats static"
check "$(field "$a" bytes_demoted) > 0" "phase 1.5x: adaptive demotes what the new phase does not use"

# Adaptive on uniform reuse (token generation) stays within 10% of static.
a=$(run decode 24G adaptive); s=$(run decode 24G static)
check "$(field "$a" sim_seconds) <= $(field "$s" sim_seconds) * 1.1" "decode 1.5x: adaptive within 1.1x of static"
# Training (train_step.py's pattern: weights used three times a step, gradients and activations
# twice, AdamW's moments once): adaptive at least 0.95x as fast as static over the steps after the
# first, and settled: nine steps demote no more than five.
a=$(run train 24G adaptive); s=$(run train 24G static); a9=$(run train 24G adaptive --passes 9)
check "$(field "$a" window_seconds) * 0.95 <= $(field "$s" window_seconds)" "train 1.5x: adaptive at least 0.95x as fast as static"
check "$(field "$a9" bytes_demoted) == $(field "$a" bytes_demoted)" "train 1.5x: adaptive settles after the first steps"
echo PASS
