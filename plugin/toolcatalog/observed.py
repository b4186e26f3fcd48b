"""What a sandboxed run was seen to do (files, connections, programs) and the sandbox report a
tool gets over all its runs: part of the normalized model, kept apart because only the sandbox,
the runners and the outputs read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Where a file a run wrote lies (see `FileChange.where`)
SCRATCH = "scratch"  # the run's own TMPDIR and HOME: private, empty at the start, thrown away after
WORKSPACE = "workspace"  # the repository (path relative to its root)
ELSEWHERE = "elsewhere"  # anywhere else (/tmp, /etc, ...)
# The sandbox's HOME for every run (in its scratch folder): a write there would persist outside a sandbox.
SANDBOX_HOME = "/scratch/home"

# How it changed (see `FileChange.change`)
FILE_CHANGES = ("created", "changed", "deleted", "temporary", "blocked", "failed", "unknown")


@dataclass(slots=True)
class FileChange:
    """A file a sandboxed run wrote, or tried to write.

    `change`: `created`, `changed` or `deleted` (found by comparing the writable places before and
    after the run); from the system-call trace, for a write the comparison did not find:
    `temporary` (written and removed again during the run), `blocked` (where the sandbox allows
    no write: under bubblewrap anywhere outside the run's writable places, whatever the error; under
    Landlock refused with `EROFS`, `EACCES`, `EPERM`; nothing changed), `failed` (the call failed
    where the run may write, or under Landlock with another error, `error`, such as `ENOENT`;
    nothing changed) or `unknown` (the call never returned: its process ended in it, or a signal
    cut it short, so whether it wrote is unknown). In the sandbox every write lands in a throwaway
    copy: none of them reached the real repository or machine.
    """

    path: str  # absolute as the tool saw it; relative to the workspace root when `where` is WORKSPACE
    where: str  # SCRATCH | WORKSPACE | ELSEWHERE
    change: str  # one of FILE_CHANGES
    error: str = ""  # `failed` only: the error's name (`ENOENT`), "" when the tracer gave none

    def as_dict(self) -> dict[str, Any]:
        out = {"path": self.path, "where": self.where, "change": self.change}
        if self.error:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class Connection:
    """A network connection a sandboxed run attempted (connect, send or bind on an IP socket, or
    an abstract Unix socket), a Unix socket with a path outside its private folders it reached, or
    a socket the sandbox refused to open at all (`socket:udp`, `socket:icmp`, ...: the Landlock
    launcher's families; `socket:vsock`: a VM socket, under our own tracer)."""

    address: str  # "127.0.0.1:8080", "[::1]:443", "unix:@name", "unix:/run/x.sock", "vsock:2:1234", "socket:udp", "socket:vsock"
    allowed: bool  # the run had the network
    # The sandbox provably kept it in: bubblewrap's own network namespace, or the call was refused.
    # False: nothing shows it went nowhere (it may have arrived).
    contained: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"address": self.address, "allowed": self.allowed, "contained": self.contained}


@dataclass(slots=True)
class Observed:
    """What a sandboxed run (or all of a tool's runs) was seen to do.

    Files are always observed in the places a tool may write (a before/after comparison); with
    `traced`, every write attempt anywhere, every network connection and every program started were
    also seen, as system calls. Without it, `connections` and `programs` are unknown (empty).
    `incomplete`: part of the run went unseen (the trace was cut at its size limit or lost, or a
    writable folder was too large to compare), so what the lists do not show is unknown: such a
    run is "not observed", never "no effects"."""

    traced: bool = False
    files: list[FileChange] = field(default_factory=list)
    connections: list[Connection] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)  # absolute paths, in the order first started
    spawned: list[str] = field(default_factory=list)  # of those, started besides its own command (what `exec.allow` governs)
    refused: list[str] = field(default_factory=list)  # programs it tried to start that the sandbox refused to execute
    truncated: bool = False  # a list reached its cap; more happened than is listed
    incomplete: bool = False  # part of the run went unseen (see above)

    # How much one report lists, per run and merged over a tool's runs; past it the list is cut
    # and `truncated` set.
    LIMITS = {"files": 100, "connections": 50, "programs": 50, "spawned": 50, "refused": 50}

    def cap(self) -> None:
        """Cut every list to its limit (LIMITS), marking the report truncated when one was longer."""
        for name, limit in self.LIMITS.items():
            items = getattr(self, name)
            if len(items) > limit:
                setattr(self, name, items[:limit])
                self.truncated = True

    def writes(self, where: tuple[str, ...] = (WORKSPACE, ELSEWHERE)) -> list[FileChange]:
        """File changes in the given places (by default: everything outside the scratch folder)."""
        return [f for f in self.files if f.where in where]

    def program_names(self) -> list[str]:
        """The programs by file name, each once (their folders differ from machine to machine)."""
        return list(dict.fromkeys(p.rsplit("/", 1)[-1] for p in self.programs))

    @property
    def quiet(self) -> bool:
        """Traced in full, and seen to write nothing outside its scratch folder and touch no network."""
        return self.traced and not self.incomplete and not self.writes() and not self.connections

    def as_dict(self) -> dict[str, Any]:
        return {
            "traced": self.traced,
            "files": [f.as_dict() for f in self.files],
            "connections": [c.as_dict() for c in self.connections],
            "programs": list(self.programs),
            "spawned": list(self.spawned),
            "refused": list(self.refused),
            "truncated": self.truncated,
            "incomplete": self.incomplete,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Observed":
        return cls(
            traced=bool(data.get("traced", False)),
            files=[FileChange(f["path"], f["where"], f["change"], f.get("error", "")) for f in data.get("files", [])],
            connections=[Connection(c["address"], bool(c["allowed"]), bool(c.get("contained", False))) for c in data.get("connections", [])],
            programs=list(data.get("programs", [])),
            spawned=list(data.get("spawned", [])),
            refused=list(data.get("refused", [])),
            truncated=bool(data.get("truncated", False)),
            incomplete=bool(data.get("incomplete", False)),
        )


@dataclass(slots=True)
class SandboxReport:
    """How a tool's processes were isolated and what they were seen to do, over all its runs.

    `mechanism` None means its processes ran unsandboxed (`reason` says why: `sandbox: off`, or no
    sandbox works on this machine under `sandbox: auto`). A tool none of whose processes started has
    no report at all (`Tool.sandbox` is None)."""

    mechanism: str | None  # "bwrap" | "landlock" | None
    profile: str = ""  # what the sandbox allowed, in one line
    reason: str = ""  # why the runs were not sandboxed ("" when they were)
    refused: dict[str, str] | None = None  # bubblewrap installed but refused here: {mechanism, reason, fix}
    processes: int = 0  # processes started
    observed: Observed | None = None  # merged over every process; None when unsandboxed
    undeclared: list[str] = field(default_factory=list)  # undeclared effects, each naming a path or address
    declared_no_effects: bool | None = None  # the contract says the tool changes nothing (None: it does not say)

    @property
    def sandboxed(self) -> bool:
        return self.mechanism is not None

    @property
    def verified_no_effects(self) -> bool:
        """"observed: no writes, no network": sandboxed, traced in full, and nothing outside scratch."""
        return self.sandboxed and self.processes > 0 and self.observed is not None and self.observed.quiet

    @property
    def unobserved(self) -> bool:
        """Sandboxed, but what its runs did was not (fully) seen: not traced, or the trace was lost."""
        return self.sandboxed and (self.observed is None or not self.observed.traced or self.observed.incomplete)

    @property
    def caught_mutating(self) -> bool:
        """The contract declares no effects, yet a run was caught with one."""
        return bool(self.declared_no_effects) and bool(self.undeclared)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sandboxed": self.sandboxed,
            "mechanism": self.mechanism,
            "profile": self.profile,
            "reason": self.reason,
            "refused": None if self.refused is None else dict(self.refused),
            "processes": self.processes,
            "observed": None if self.observed is None else self.observed.as_dict(),
            "undeclared_effects": list(self.undeclared),
            "declared_no_effects": self.declared_no_effects,
            "verified_no_effects": self.verified_no_effects,
            "caught_mutating": self.caught_mutating,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SandboxReport":
        observed = data.get("observed")
        return cls(
            mechanism=data.get("mechanism"),
            profile=data.get("profile", ""),
            reason=data.get("reason", ""),
            refused=None if data.get("refused") is None else {k: str(v) for k, v in data["refused"].items()},
            processes=int(data.get("processes", 0)),
            observed=None if observed is None else Observed.from_json(observed),
            undeclared=list(data.get("undeclared_effects", [])),
            declared_no_effects=data.get("declared_no_effects"),
        )
