"""Virtual-environment bootstrap shared by peers/generate.py and peers/bench.py.

Standard library only: this module runs under whatever `python3` started the script. If the running
interpreter is not peers/.venv, it creates that venv (python3 -m venv) when missing, installs
peers/requirements.txt into it when the requirements changed since the last install (a sha256 stamp is kept
inside the venv), and re-executes the calling script with the venv's interpreter and the same arguments.
"""

import hashlib
import os
import subprocess
import sys

PEERS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(PEERS_DIR)
VENV_DIR = os.path.join(PEERS_DIR, ".venv")
REQUIREMENTS = os.path.join(PEERS_DIR, "requirements.txt")
STAMP = os.path.join(VENV_DIR, ".requirements.sha256")


def _in_venv():
    return os.path.realpath(sys.prefix) == os.path.realpath(VENV_DIR)


def _requirements_hash():
    with open(REQUIREMENTS, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def ensure_venv(script, single_thread=False):
    """Make sure `script` runs inside peers/.venv; re-exec if it does not.

    single_thread=True pins BLAS/OpenMP/numba to one thread, which keeps floating-point reductions in a
    fixed order so that regenerated fixtures are byte-identical from run to run.
    """
    if single_thread:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
            os.environ[var] = "1"
    if _in_venv():
        return
    if sys.version_info < (3, 10):
        sys.exit("peers: Python >= 3.10 required (pins were resolved on 3.11)")
    venv_python = os.path.join(VENV_DIR, "bin", "python")
    if not os.path.exists(venv_python):
        print(f"peers: creating virtual environment {VENV_DIR}", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", VENV_DIR])
    wanted = _requirements_hash()
    have = None
    if os.path.exists(STAMP):
        with open(STAMP) as fh:
            have = fh.read().strip()
    if have != wanted:
        print("peers: installing pinned requirements (pip install -r peers/requirements.txt)", file=sys.stderr)
        subprocess.check_call(
            [venv_python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", REQUIREMENTS]
        )
        with open(STAMP, "w") as fh:
            fh.write(wanted + "\n")
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")
    os.execve(venv_python, [venv_python, os.path.abspath(script)] + sys.argv[1:], env)
