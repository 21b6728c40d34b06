#!/usr/bin/env bash
# Regenerates docs/formulas.md from the derivative tables (the test
# `formulas_doc_is_generated_from_the_tables` fails while it is stale).
set -euo pipefail
cd "$(dirname "$0")/.."
FERROGRAD_WRITE_FORMULAS=1 cargo test -p ferrograd -q --test formulas formulas_doc_is_generated_from_the_tables
echo "wrote docs/formulas.md"
