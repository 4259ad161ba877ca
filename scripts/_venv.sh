# Sourced by scripts/demo, scripts/test and scripts/bench: create .venv if missing and install what is needed.
# Usage: ensure_venv EXTRAS [TORCH]   (EXTRAS: pip extras of this project, e.g. "test" or "" for the core;
#                                      TORCH: yes to install the pinned CPU torch wheel first)
# Installs are constrained by scripts/constraints.txt (the lock `scripts/lock` writes), so CI, a newcomer and this
# machine resolve the same versions; set TGBHUB_UNLOCKED=1 to resolve the newest versions instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
LOCK="$ROOT/scripts/constraints.txt"

ensure_venv() {
    local extras="$1" want_torch="${2:-no}"
    if [ ! -x "$PY" ]; then
        echo "creating $VENV (python3 -m venv)..." >&2
        python3 -m venv "$VENV"
    fi
    local constraints=(-c "$LOCK") lock_state="locked"
    if [ "${TGBHUB_UNLOCKED:-0}" = "1" ]; then
        constraints=()
        lock_state="unlocked"
    fi
    # Reinstall only when the project's dependencies, the lock or the requested extras changed.
    local stamp="$VENV/.tgbhub-stamp-${extras:-core}-$want_torch"
    local digest
    digest="$(cat "$ROOT/pyproject.toml" "$LOCK" | sha256sum | cut -c1-16)-$lock_state"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
        echo "setting up $VENV (extras: ${extras:-none}, torch: $want_torch, $lock_state; about a minute," \
            "once: later runs reuse it)..." >&2
        local setup_started=$SECONDS
        "$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
        if [ "$want_torch" = "yes" ]; then
            # The pinned CPU wheel; an unpinned torch would pull gigabytes of CUDA packages.
            "$PY" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" 2>&1 \
                | grep -v "^WARNING: Location" >&2 || true
        fi
        local target="$ROOT"
        [ -n "$extras" ] && target="$ROOT[$extras]"
        # A failed install must stop here, not surface later as an import error.
        if ! "$PY" -m pip install --quiet --disable-pip-version-check "${constraints[@]}" -e "$target" 2>&1 \
                | { grep -v "^WARNING: Location" >&2 || true; }; then
            echo "pip install of $target failed (see above)" >&2
            exit 1
        fi
        "$PY" -c "import tgbhub" >/dev/null
        echo "$digest" > "$stamp"
        echo "$VENV is ready ($((SECONDS - setup_started)) s)" >&2
    fi
}

# Debian's chromium and chromium-driver, which tests/test_site_browser.py drives through Selenium: installed with
# apt-get when missing (as root, else through sudo -n). TGBHUB_NO_APT=1 skips the install; the browser test then
# fails, saying what is missing.
ensure_chromium() {
    if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
        return 0
    fi
    if [ "${TGBHUB_NO_APT:-0}" = "1" ]; then
        echo "chromium/chromium-driver are missing and TGBHUB_NO_APT=1: not installing them;" \
            "tests/test_site_browser.py will fail (apt-get install -y chromium chromium-driver)" >&2
        return 0
    fi
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo -n)
    local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)
    echo "installing chromium and chromium-driver (apt-get) for the browser test..." >&2
    if ! "${sudo[@]}" "${install[@]}" >/dev/null 2>&1; then
        # a fresh machine may not have read its package lists yet
        if ! { "${sudo[@]}" apt-get update -qq >/dev/null 2>&1 && "${sudo[@]}" "${install[@]}" >/dev/null 2>&1; }; then
            echo "could not install chromium chromium-driver with apt-get (not root and no sudo, or no apt):" \
                "install them yourself; tests/test_site_browser.py fails without them" >&2
        fi
    fi
}
