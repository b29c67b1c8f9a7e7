#!/usr/bin/env bash
# Generate the typed client package from openapi.yaml into DEST/service_api_client.
#
# Usage: codegen/generate.sh DEST
#
# openapi-python-client writes a whole project (pyproject, README, caches of its
# ruff post-hooks); only the package folder is kept, so DEST holds nothing else.
set -euo pipefail
dest=${1:?usage: codegen/generate.sh DEST}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The templates, and one more written here from the spec: the operations that opt out of
# its security (`security: []`, the token request). The generator's parsed endpoints do
# not tell them from the operations under the global security; they get no accessor on
# the client, which makes that call itself (codegen/templates/accessors.jinja).
cp -R "$root/codegen/templates" "$work/templates"
# The interpreter of the generator's own environment, which has PyYAML.
generator=$(command -v openapi-python-client) \
  || { echo "openapi-python-client is not on PATH: run make, which sets up .venv" >&2; exit 1; }
python=$(dirname "$generator")/python
"$python" - "$root/openapi.yaml" >"$work/templates/open_operations.jinja" <<'PY'
import json, sys, yaml
spec = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
names = [op["operationId"] for item in (spec.get("paths") or {}).values() for op in item.values()
         if isinstance(op, dict) and op.get("security") == [] and "operationId" in op]
print("{% set open_operations = " + json.dumps(names) + " %}")
PY
(
  cd "$work"
  openapi-python-client generate \
    --path "$root/openapi.yaml" \
    --config "$root/codegen/config.yaml" \
    --custom-template-path "$work/templates" \
    --meta pdm \
    --output-path "$work/project" >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
)
# Warnings mean part of the spec was skipped: treat them as errors.
if grep -qi "warning" "$work/log"; then cat "$work/log" >&2; exit 1; fi
mkdir -p "$dest"
rm -rf "$dest/service_api_client"
mv "$work/project/service_api_client" "$dest/service_api_client"
