#!/usr/bin/env bash
# Prints the line and branch coverage of each module's own tests, from the CSV reports JaCoCo
# wrote during `mvn verify` (target/site/jacoco/jacoco.csv; the HTML report, index.html, sits beside it),
# then of the published modules under all their tests together (turnstile-coverage).
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
reports=(*/target/site/jacoco/jacoco.csv examples/*/target/site/jacoco/jacoco.csv)
if (( ${#reports[@]} == 0 )); then
  echo "coverage: no JaCoCo report (run mvn verify first)"
  exit 0
fi
# JaCoCo's CSV: GROUP,PACKAGE,CLASS,INSTRUCTION_MISSED,INSTRUCTION_COVERED,BRANCH_MISSED,BRANCH_COVERED,LINE_MISSED,LINE_COVERED,…
awk -F, '
  FNR == 1 { module = FILENAME; sub(/\/target\/.*/, "", module); order[++n] = module; next }
  { lm[module] += $8; lc[module] += $9; bm[module] += $6; bc[module] += $7 }
  function pct(c, m) { return c + m > 0 ? 100 * c / (c + m) : 0 }
  END {
    printf "coverage: %-32s %8s %7s %8s %7s\n", "module", "lines", "of", "branches", "of"
    for (i = 1; i <= n; i++) {
      m = order[i]; if (lm[m] + lc[m] == 0) continue
      printf "coverage: %-32s %7.1f%% %7d %7.1f%% %7d\n", m, pct(lc[m], lm[m]), lm[m] + lc[m], pct(bc[m], bm[m]), bm[m] + bc[m]
      tl += lm[m] + lc[m]; tlc += lc[m]; tb += bm[m] + bc[m]; tbc += bc[m]
    }
    if (tl > 0) printf "coverage: %-32s %7.1f%% %7d %7.1f%% %7d\n", "all", 100 * tlc / tl, tl, pct(tbc, tb - tbc), tb
  }' "${reports[@]}"
# The same modules covered by all their tests together (turnstile-coverage's report-aggregate): a
# class tested from another module (turnstile-claim's, from the JDBC and MongoDB stores) counts here.
merged=turnstile-coverage/target/site/jacoco-aggregate/jacoco.csv
if [[ -f $merged ]]; then
  awk -F, '
    NR == 1 { next }
    { module = $1; sub(/.*\//, "", module); if (!(module in lm)) order[++n] = module
      lm[module] += $8; lc[module] += $9; bm[module] += $6; bc[module] += $7 }
    function pct(c, m) { return c + m > 0 ? 100 * c / (c + m) : 0 }
    END {
      printf "coverage: %-32s %8s %7s %8s %7s\n", "published module, all tests", "lines", "of", "branches", "of"
      for (i = 1; i <= n; i++) {
        m = order[i]
        printf "coverage: %-32s %7.1f%% %7d %7.1f%% %7d\n", m, pct(lc[m], lm[m]), lm[m] + lc[m], pct(bc[m], bm[m]), bm[m] + bc[m]
        tl += lm[m] + lc[m]; tlc += lc[m]; tb += bm[m] + bc[m]; tbc += bc[m]
      }
      if (tl > 0) printf "coverage: %-32s %7.1f%% %7d %7.1f%% %7d\n", "all published", 100 * tlc / tl, tl, pct(tbc, tb - tbc), tb
    }' "$merged"
fi
