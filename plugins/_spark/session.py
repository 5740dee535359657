"""The one Spark session Veil's Spark paths share (:func:`spark_session`, the one place pyspark's
session is made), and what stops one from starting: pyspark missing, no Java 17, a master that does
not answer (docs/guide.md).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import threading
import warnings

from veil.engine import BadInput

_SESSION_LOCK = threading.Lock()


_SESSION = None  # the session spark_session made, reused by later runs on any thread


INSTALL_HINT = "install it with: pip install 'veil[spark]' (Spark also needs Java 17 on the PATH)"


CONNECT_SECONDS = 5.0  # how long to wait for a cluster's master to answer before saying it cannot be reached


def pyspark_available() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return True


def spark_session(master: str = "local[*]"):
    """The Spark session of this process for ``master`` (created on first use, then reused: a JVM
    takes seconds to start). A session running with another master is stopped first."""
    try:
        with warnings.catch_warnings():  # pyspark's notice about pandas 3 concerns its pandas API, unused here
            warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
            from pyspark.sql import SparkSession
    except ImportError:
        raise BadInput(f"running on Spark needs pyspark; {INSTALL_HINT}") from None
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None or not _running(_SESSION) or _SESSION.sparkContext.master != master:
            problem = master_problem(master) or java_problem()  # before a working session is stopped
            if problem:
                raise BadInput(problem)
        active = _SESSION if _SESSION is not None and _running(_SESSION) else SparkSession.getActiveSession()
        if active is not None:
            if active.sparkContext.master == master:
                _SESSION = active
                return active
            active.stop()
        if master.startswith("local"):
            # executors of a local master are this machine's Python: the one running Veil
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
                session = (
                    SparkSession.builder.master(master)
                    .appName("veil")
                    .config("spark.ui.enabled", "false")
                    .config("spark.ui.showConsoleProgress", "false")
                    .getOrCreate()
                )
        except Exception as exc:  # no Java, a bad master URL, an unreachable cluster
            raise BadInput(
                f"Spark could not start with master {master!r}: {one_line(exc)} (Spark needs Java 17 on the PATH)"
            ) from None
        session.sparkContext.setLogLevel("ERROR")
        _SESSION = session
        return session


def java_problem() -> str:
    """Why Spark cannot start its Java side here, in one line ("" when a java is found where Spark
    looks: JAVA_HOME's bin/java when JAVA_HOME is set, else java on the PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not (os.path.isfile(java) and os.access(java, os.X_OK)):
            return (
                f"Spark needs Java 17: JAVA_HOME is {home}, which has no bin/java; point it at a Java 17 installation"
            )
        return ""
    if shutil.which("java") is None:
        return "Spark needs Java 17: no java on the PATH and JAVA_HOME is not set; install Java 17 or set JAVA_HOME"
    return ""


_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|spark://[\w.\-:\[\],]+"
    r"|(k8s|mesos)://[\w.\-:/\[\]@]+"
)


def master_problem(master: str, timeout: float = CONNECT_SECONDS) -> str:
    """Why a standalone cluster's master (``spark://host:port``, several separated by commas) cannot be
    reached, in one line naming the URL ("" when one of them answers, or for other masters); and why a
    master is none Spark takes (a shell command, a typo) before Spark is started to find out."""
    if not _MASTER.fullmatch(master):
        return (
            f"{master!r} is not a Spark master: give local, local[N], local[*], spark://HOST:PORT, yarn, "
            f"k8s://URL or mesos://URL"
        )
    if not master.startswith("spark://"):
        return ""
    reasons = []
    for address in master[len("spark://") :].split(","):
        host, _, port = address.strip().rpartition(":")
        if not host or not port.isdigit():
            return f"the Spark master {master} is not a URL spark://HOST:PORT"
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return ""
        except OSError as exc:
            reasons.append(exc.strerror or type(exc).__name__)
    return (
        f"cannot reach the Spark master {master}: {reasons[0].lower() if reasons else 'no address'} "
        f"(waited at most {timeout:g} s)"
    )


def _running(session) -> bool:
    """Whether the session's context is still up (a stopped one has no Java context)."""
    return getattr(session.sparkContext, "_jsc", None) is not None


def one_line(exc: BaseException) -> str:
    """The line of a (Java-wrapped) error that says what went wrong."""
    text = str(exc)
    found = re.findall(r"^\s*(\w+(?:Error|Exception|Limit): .+)$", text, flags=re.MULTILINE)
    line = found[-1] if found else (text.strip().splitlines() or [type(exc).__name__])[0]
    return line.strip()[:300]
