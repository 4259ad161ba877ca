# Sourced by scripts/demo, scripts/test and scripts/bench: create .venv if missing and install what is needed.
# Usage: ensure_venv EXTRAS   (EXTRAS: pip extras of this project, e.g. "test" or "" for the core)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

ensure_venv() {
    local extras="$1" want_torch="${2:-no}"
    if [ ! -x "$PY" ]; then
        python3 -m venv "$VENV"
    fi
    # Reinstall only when the project's dependencies or the requested extras changed.
    local stamp="$VENV/.tgbhub-stamp-${extras:-core}-$want_torch"
    local digest
    digest="$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
        echo "setting up $VENV (extras: ${extras:-none}, torch: $want_torch)..." >&2
        "$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
        if [ "$want_torch" = "yes" ]; then
            # The pinned CPU wheel; an unpinned torch would pull gigabytes of CUDA packages.
            "$PY" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" >&2 || true
        fi
        local target="$ROOT"
        [ -n "$extras" ] && target="$ROOT[$extras]"
        "$PY" -m pip install --quiet --disable-pip-version-check -e "$target" 2>&1 | grep -v "^WARNING: Location" >&2 || true
        "$PY" -c "import tgbhub" >/dev/null
        echo "$digest" > "$stamp"
    fi
}
