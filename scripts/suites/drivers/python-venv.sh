# Sourced by suite and bench scripts: makes "$work/venv" (work must be set)
# a Python virtual environment with the official `neo4j` 6.x driver,
# installing python3 / python3-venv with apt-get when missing. Fails, never
# skips, when something cannot be had.

need_apt() {
    if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_driver_venv() {
    command -v python3 >/dev/null || need_apt python3
    if [ ! -x "$work/venv/bin/python" ]; then
        python3 -m venv "$work/venv" 2>/dev/null || { need_apt python3-venv; python3 -m venv "$work/venv"; }
    fi
    "$work/venv/bin/python" -c "import neo4j, pytest, pytz; assert neo4j.__version__.startswith('6.')" 2>/dev/null ||
        "$work/venv/bin/pip" install -q 'neo4j>=6,<7' pytest pytz
}
