"""Which sandbox works on this machine: asked once per build, by really starting one.

Best first: bubblewrap with an unprivileged user namespace; bubblewrap as root without one (where
user namespaces are off); bubblewrap without a new `/proc` (containers that refuse one); then the
Landlock launcher, which needs no namespaces at all (not under `sandbox: bubblewrap`): the order and
the modes of `backends.BACKENDS`. When bubblewrap
is installed but refused, the first attempt's error is kept (`Facts.refused`, with its fix), so the
build says why its sandbox is the weaker one. Each bubblewrap attempt starts `/bin/true`
with the same namespaces and mounts a real run uses, so "works" means works.

Who watches the runs' system calls, tried the same way on that start-up: under bubblewrap, our own
tracer (ptracer.py, in the spawner) where the machine is x86-64, the spawner starts and the traced
start-up is seen from its exec to its end (ptrace may be forbidden, bubblewrap may lack `--seccomp`,
`--info-fd` or `--block-fd`); strace, when installed, around the chosen launcher (`Facts.tracer`:
the fallback where ours does not work, and the tracer of Landlock runs and of MCP servers, which
the MCP SDK starts); else nothing (`Facts.untraced` says why).
"""

from __future__ import annotations

import functools
import os
import platform
import select
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .. import spawner
from . import backends, bwrap, landlock_launcher, limits, ptracer, seccomp, trace, view

PROFILE_VERSION = 8  # bump when the profile changes what a tool can do or what is observed (5: what our tracer sees; 6: a failed write is `blocked` only when refused; 7: VM sockets refused, syscall(-1) answered ENOSYS, each sendmmsg message seen; 8: under bubblewrap a failed write outside the writable places is `blocked` whatever the error)
OWN_TRACER = "toolcatalog"  # our own tracer's name (ptracer.py), as profiles and the build log say it
LAUNCHER = Path(landlock_launcher.__file__)

# A fragment of bubblewrap's error -> what it means here, and the one-line fix where there is one
# (first match wins). The fix is shown with the refusal in the build log, the catalog and pages.
_SYSCTL_APPARMOR = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
_REASONS = (
    ("setting up uid map: Permission denied", "AppArmor blocks unprivileged user namespaces (Ubuntu 23.10 and later)",
     _SYSCTL_APPARMOR),
    ("Failed RTM_NEWADDR", "AppArmor lets the user namespace exist but without capabilities, so the network "
     "namespace cannot be set up", _SYSCTL_APPARMOR),
    ("No permissions to creating new namespace", "unprivileged user namespaces are disabled "
     "(kernel.unprivileged_userns_clone=0, or a seccomp profile such as Docker's default)",
     "sudo sysctl -w kernel.unprivileged_userns_clone=1"),
    ("max_*_namespaces exceeded", "user namespaces are disabled (user.max_user_namespaces=0)",
     "sudo sysctl -w user.max_user_namespaces=15000"),
    ("Can't mount proc", "a new /proc is refused (an unprivileged container with masked /proc paths)", ""),
    ("setuid use of bubblewrap is not supported", "bwrap is setuid but built without setuid support", ""),
    ("Creating new namespace failed", "namespace creation is refused (seccomp or a security module)", ""),
    ("Operation not permitted", "refused by the kernel (seccomp, a security module or a missing capability)", ""),
)


@dataclass(frozen=True)
class Refusal:
    """Why a sandbox that is installed did not work here, so the build fell back to a weaker one."""

    mechanism: str  # "bwrap"
    reason: str  # what bubblewrap's error means (`_REASONS`), or its last line
    fix: str = ""  # one command that lifts the refusal ("" when none is known)

    def as_dict(self) -> dict[str, str]:
        return {"mechanism": self.mechanism, "reason": self.reason, "fix": self.fix}

    def describe(self) -> str:
        """"bubblewrap refused: REASON (fix: COMMAND)", for the build log."""
        return f"bubblewrap refused: {self.reason}" + (f" (fix: {self.fix})" if self.fix else "")


@dataclass(frozen=True)
class Facts:
    """The sandbox this build uses (or why none), decided once per build."""

    mode: str  # the `sandbox` option: auto | required | bubblewrap | off
    mechanism: str | None = None  # "bwrap" | "landlock" | None (no sandbox)
    variant: str = ""  # bwrap: userns | root | noproc; landlock: "ABI <n>"
    program: str = ""  # the bwrap executable
    tracer: str | None = None  # strace, when it can watch sandboxed runs here (the fallback, Landlock, MCP servers)
    ptrace: bool = False  # our own tracer (ptracer.py) watches the bubblewrap runs the build starts
    reason: str = ""  # why there is no sandbox ("" when there is one)
    untraced: str = ""  # why runs are not traced ("" when they are)
    refused: Refusal | None = None  # bubblewrap is installed but did not work (the first attempt's error)
    # What the build's options make of it (`configured`): the workspace view and the caps.
    workspace: str = view.TOOL  # `sandbox_workspace`: tool | all
    workspace_extra: tuple[str, ...] = ()  # its list form: more folders, relative to the workspace
    caps: limits.Limits = limits.Limits()
    limiter: str | None = None  # `prlimit`, which sets the caps

    def configured(self, workspace: str, extra: tuple[str, ...], caps: limits.Limits) -> "Facts":
        """These facts with the build's view and caps."""
        return replace(self, workspace=workspace, workspace_extra=tuple(extra), caps=caps, limiter=limits.limiter())

    @property
    def withheld(self) -> bool:
        """Nothing runs: `sandbox: required` without a sandbox, or `sandbox: bubblewrap` without bubblewrap."""
        if self.mode == "bubblewrap":
            return self.mechanism != "bwrap"
        return self.mode == "required" and self.mechanism is None

    @property
    def nproc(self) -> str:
        """How the process count is capped here (limits.process_cap)."""
        return limits.process_cap(self.mechanism, self.variant)

    @property
    def memory_group(self) -> bool:
        """Whether a control group caps each run's total memory here (limits.memory_group)."""
        return self.mechanism is not None and limits.memory_group()

    @property
    def traced(self) -> bool:
        """Whether the runs the build starts are traced (by our tracer or strace)."""
        return self.tracer is not None or self.own_tracer

    @property
    def own_tracer(self) -> bool:
        """Whether our own tracer watches the runs the build starts (bubblewrap's)."""
        return self.ptrace and self.mechanism == "bwrap"

    def watcher(self, started_by_us: bool = True) -> str:
        """The tracer of a run: OWN_TRACER, "strace", or "" (untraced). `started_by_us`: False for
        a process something else starts (an MCP server), which only strace can wrap."""
        if started_by_us and self.own_tracer:
            return OWN_TRACER
        return "strace" if self.tracer is not None else ""

    def key(self) -> list[object]:
        """What results depend on: part of every cached result's key."""
        return ["sandbox", PROFILE_VERSION, self.mode, self.mechanism, self.variant, self.watcher(), self.tracer is not None,
                self.workspace, list(self.workspace_extra), [self.caps.memory_mb, self.caps.processes, self.caps.file_mb],
                self.limiter is not None, self.nproc, self.memory_group,
                # Reports name a refused bubblewrap; where none was refused the key is as before.
                *([self.refused.as_dict()] if self.refused is not None else [])]

    def profile(self, network: bool, mcp: bool = False) -> str:
        """One line saying what a run was allowed, for pages and the catalog (its backend's `describe`).
        `mcp`: some of the runs are MCP servers, which the MCP SDK starts (strace traces those)."""
        describe: Callable[[Facts, bool], str] = backends.resolve(backends.get(self.mechanism).describe)
        line = describe(self, network)
        if mcp and self.own_tracer:
            servers = "MCP servers by strace" if self.tracer is not None else "MCP servers not traced"
            line = line.replace(watched(self), f"system calls traced (toolcatalog's own tracer; {servers})")
        return line


@dataclass
class Attempt:
    """What trying one backend here found: the facts when it works (and the argv that proved it,
    for the tracer's own probe), else why not."""

    facts: Facts | None = None
    startup: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    refused: Refusal | None = None  # installed, but refused here
    own_tracer: str = ""  # bubblewrap: why our tracer did not watch the start-up ("" when it did, or was not tried)


def watched(facts: Facts, started_by_us: bool = True) -> str:
    """What a profile says of the trace: by which tracer, or that there is none."""
    who = facts.watcher(started_by_us)
    if who == OWN_TRACER:
        return "system calls traced (toolcatalog's own tracer)"
    return "system calls traced (strace)" if who else "not traced (only file changes are observed)"


def _shared(facts: Facts, network: bool) -> tuple[str, str, str, str]:
    """The parts of a profile line every backend says: network, what is watched, the view, the caps."""
    net = "network allowed" if network else "no network"
    watched_by = watched(facts)
    seen = view.describe(facts.workspace, facts.workspace_extra)
    caps = limits.describe(facts.caps, facts.limiter, facts.nproc, facts.memory_group)
    return net, watched_by, seen, caps


def describe_bwrap(facts: Facts, network: bool) -> str:
    net, watched, seen, caps = _shared(facts, network)
    namespace = {"userns": "user namespace", "root": "as root, no user namespace", "noproc": "user namespace, no /proc"}
    return (f"bubblewrap ({namespace.get(facts.variant, facts.variant)}): system read-only; {seen}, "
            f"working folder a throwaway copy (when small enough); private TMPDIR, HOME and /tmp; own PID namespace; "
            f"{net}; {caps}; {watched}")


def describe_landlock(facts: Facts, network: bool) -> str:
    net, watched, seen, caps = _shared(facts, network)
    return (f"Landlock ({facts.variant}): reads limited to the system and {seen}; "
            f"writes only to a private TMPDIR and HOME; {net}{'' if network else ' (TCP refused; UDP, raw and other sockets refused)'}; "
            f"no Unix sockets; no PID namespace; {caps}; {watched}")


def describe_off(facts: Facts, network: bool) -> str:
    return ""  # no sandbox: no profile


def explain(stderr: str) -> str:
    """What a sandbox's error means, with its fix: "REASON (fix: COMMAND)"."""
    reason, fix = _meaning(stderr)
    return reason + (f" (fix: `{fix}`)" if fix else "")


def _meaning(stderr: str) -> tuple[str, str]:
    for fragment, why, fix in _REASONS:
        if fragment in stderr:
            return why, fix
    last = [line for line in stderr.splitlines() if line.strip()]
    return (last[-1].strip()[:200] if last else "unknown failure"), ""


def _try(argv: list[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL,
                              env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    return done.returncode == 0, done.stderr


def launcher_argv(python: str = sys.executable) -> list[str]:
    return [python, "-I", "-S", str(LAUNCHER)]


def probe(mode: str) -> Facts:
    """The sandbox for `mode` (the `sandbox` option) on this machine: the first of
    `backends.BACKENDS` allowed under `mode` that works, traced when strace can be."""
    if mode in backends.OFF.modes:
        off: Attempt = backends.resolve(backends.OFF.probe)(mode)
        assert off.facts is not None
        return off.facts
    if not sys.platform.startswith("linux"):
        return Facts(mode, reason=f"the sandbox needs Linux (this is {sys.platform})")
    failures: list[str] = []
    refused: Refusal | None = None  # an earlier backend's refusal: the chosen one is the weaker
    for backend in backends.BACKENDS:
        if mode not in backend.modes:
            continue
        attempt: Attempt = backends.resolve(backend.probe)(mode)
        if attempt.facts is not None:
            chosen = replace(attempt.facts, refused=refused) if refused is not None else attempt.facts
            return _traced(chosen, attempt.startup, attempt.own_tracer)
        failures += attempt.failures
        refused = refused or attempt.refused
    lead = "`sandbox: bubblewrap`, and " if mode == "bubblewrap" else "no sandbox works here: "
    return Facts(mode, reason=lead + "; ".join(failures), refused=refused)


def probe_off(mode: str) -> Attempt:
    return Attempt(Facts(mode, reason="`sandbox: off`: processes run as the build's own user"))


def probe_bwrap(mode: str) -> Attempt:
    """bubblewrap, variant by variant (best first); the first refusal is kept, with its fix."""
    program = shutil.which("bwrap")
    if program is None:
        return Attempt(failures=["bubblewrap (`bwrap`) is not installed"])
    attempt = Attempt()
    for variant in bwrap.VARIANTS:
        if variant == "root" and os.geteuid() != 0:
            continue
        argv = bwrap.probe_argv(program, variant)
        # One start-up says both: bubblewrap works, and our tracer watches it (else tried untraced).
        own, own_why = own_tracer_works(argv)
        ok, stderr = (True, "") if own else _try(argv)
        if ok:
            return Attempt(Facts(mode, "bwrap", variant, program, ptrace=own), argv, own_tracer=own_why)
        attempt.failures.append(f"bwrap ({variant}): {explain(stderr)}")
        attempt.refused = attempt.refused or Refusal("bwrap", *_meaning(stderr))
    return attempt


def probe_landlock(mode: str) -> Attempt:
    """The Landlock launcher, which needs no namespaces."""
    abi = landlock_launcher.abi_version()
    if abi < 1:
        return Attempt(failures=["Landlock is unavailable (not in this kernel, disabled, or refused)"])
    argv = [*launcher_argv(), "--ro", "/usr", "--ro", "/bin", "--ro", "/lib", "--ro", "/lib64", "--", "/bin/true"]
    ok, stderr = _try(argv)
    if ok:
        return Attempt(Facts(mode, "landlock", f"ABI {abi}"), argv)
    return Attempt(failures=[f"Landlock: {explain(stderr)}"])


def _traced(chosen: Facts, startup: list[str], own_why: str = "") -> Facts:
    """`chosen` with its tracers: ours under bubblewrap where it watched the start-up (`probe_bwrap`
    tried it; `own_why`: why not), strace where strace can watch `startup`; else why not."""
    own = chosen.own_tracer
    strace = trace.find()
    if strace is None:
        why = "strace is not installed"
    else:
        ok, why = trace.works(strace, startup)
        if ok:
            return _with(chosen, tracer=strace, ptrace=own)
        why = f"strace cannot trace here: {why}"
    if own:
        return _with(chosen, ptrace=True, untraced=why)  # only MCP servers (and a fallback) need strace
    return _with(chosen, untraced=f"{own_why}; {why}" if own_why else why)


def tracer_trace(record: Path, at: int, execs: int, groups: tuple[str, ...] = (), rlimits: tuple[tuple[int, int], ...] = (),
                 held: bool = False) -> spawner.Trace:
    """What the spawner needs to trace a bubblewrap run (`argv[at]` is bubblewrap) into `record`
    (at most `trace.MAX_RECORDS` entries, read at each run); `groups`: the run's control groups;
    `rlimits`: its caps (limits.rlimits); `held`: started ahead, let go in its turn."""
    return spawner.Trace(_module(), _filter(), at, execs, str(record), trace.MAX_RECORDS, groups, rlimits, held)


_FILTER: list[bytes] = []


@functools.lru_cache(maxsize=1)
def _module() -> str:
    return str(Path(ptracer.__file__).resolve())


def _filter() -> bytes:
    if not _FILTER:
        _FILTER.append(seccomp.program())
    return _FILTER[0]


def own_tracer_works(startup: list[str]) -> tuple[bool, str]:
    """Whether our own tracer watches `startup` (bubblewrap starting /bin/true) here from its
    exec to its end; else why not (an architecture it does not know, no spawner, ptrace refused,
    a bubblewrap without `--seccomp`, `--info-fd` or `--block-fd`)."""
    if platform.machine() != "x86_64":
        return False, f"our tracer knows x86-64 only (this is {platform.machine()})"
    with tempfile.TemporaryDirectory(prefix="toolcatalog-probe-") as folder:
        record = Path(folder) / "trace.json"
        child = spawner.start(startup, "/", {"PATH": "/usr/bin:/bin"}, False, tracer_trace(record, 0, 0))
        if child is None or isinstance(child, (OSError, ValueError)):
            return False, f"our tracer cannot start here: {child or 'no spawner'}"
        try:
            code = child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, 9)
            code = -9
        stderr = _drain(child)
        seen = trace.load_record(record)
        if code == 0 and seen.started and not seen.lost:
            return True, ""
        return False, f"our tracer cannot trace here: {_meaning(stderr)[0] if stderr.strip() else f'exit code {code}'}"


def _drain(child: spawner.Child) -> str:
    """What the probe wrote to stderr (what is there within a second: a process of its sandbox
    left behind may hold the pipe); its pipes closed."""
    text = ""
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is None:
            continue
        try:
            if stream is child.stderr and select.select([stream], [], [], 1.0)[0]:
                os.set_blocking(stream.fileno(), False)
                text = (stream.read(65536) or b"").decode("utf-8", "replace")
        except OSError:
            pass
        finally:
            stream.close()
    return text


def _with(facts: Facts, **changes: object) -> Facts:
    values = {**facts.__dict__, **changes}
    return Facts(**values)
