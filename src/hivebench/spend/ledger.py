"""The ledger: what a results folder's calls to model servers cost, shared by every job that writes
there (on this machine, or on any cluster node that mounts the folder).

One small JSON file, read and rewritten whole under a lock file beside it (`filelock`'s `flock(2)`,
which NFS and Lustre mounted with `-o flock` honour across nodes). It holds what was spent, per study, method and
model, and what calls in flight hold: a call is made only if its worst case (`Charge` of its
reservation) fits every budget it falls under, beside what is spent and what others hold; its reply
then settles it at what the server counted. So no call passes a budget, and a stop leaves nothing
half-counted: a job killed mid-call leaves a hold that lapses (at once where its process is seen to be
gone, on its own machine; after its time elsewhere).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

SPEND_DIR = Path("results/spend")
AMOUNTS = ("usd", "input_tokens", "output_tokens")


@dataclass(frozen=True)
class Charge:
    usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Charge) -> Charge:
        return Charge(*(getattr(self, k) + getattr(other, k) for k in AMOUNTS))

    @classmethod
    def of(cls, amounts: dict[str, Any]) -> Charge:
        return cls(*(amounts.get(k, 0) for k in AMOUNTS))


@dataclass(frozen=True)
class Budget:
    """Caps on a scope's spend (None: uncapped): dollars at the config's `prices`, and tokens."""

    usd: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @classmethod
    def of(cls, entry: dict[str, Any] | None) -> Budget:
        return cls(*((entry or {}).get(k) for k in AMOUNTS))

    @property
    def capped(self) -> bool:
        return any(getattr(self, k) is not None for k in AMOUNTS)

    def over(self, charge: Charge) -> str | None:
        """The first amount of `charge` past its cap, or None."""
        return next(
            (k for k in AMOUNTS if getattr(self, k) is not None and getattr(charge, k) > getattr(self, k)), None
        )


@dataclass(frozen=True)
class Budgets:
    run: Budget = field(default_factory=Budget)  # the whole results folder: every study together
    studies: dict[str, Budget] = field(default_factory=dict)

    def capped_scopes(self) -> list[tuple[str | None, Budget]]:
        """Every capped scope: (None, the run's) and (each study, its own)."""
        run: list[tuple[str | None, Budget]] = [(None, self.run)] if self.run.capped else []
        return run + [(study, budget) for study, budget in self.studies.items() if budget.capped]

    def scopes(self, study: str) -> Iterator[tuple[str | None, Budget]]:
        """The capped scopes a call of `study` falls under: the run's and the study's own."""
        return ((scope, budget) for scope, budget in self.capped_scopes() if scope in (None, study))

    def to_json(self) -> dict[str, Any]:
        return {"run": asdict(self.run), "studies": {s: asdict(b) for s, b in self.studies.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Budgets:
        return cls(Budget.of(data.get("run")), {s: Budget.of(b) for s, b in data.get("studies", {}).items()})


class BudgetReached(RuntimeError):
    """A call that would pass a budget: it was not made."""

    def __init__(self, scope: str | None, amount: str, spent: Charge, budget: Budget, needed: Charge):
        self.scope, self.amount, self.spent, self.budget, self.needed = scope, amount, spent, budget, needed
        where = (
            "the run's budget (spend.budget)" if scope is None else f"study {scope}'s budget (studies.{scope}.budget)"
        )
        cap, used, next_call = getattr(budget, amount), getattr(spent, amount), getattr(needed, amount)
        super().__init__(
            f"{where} is reached: {amount_text(amount, used)} spent of {amount_text(amount, cap)}, "
            f"{amount_text(amount, cap - used)} left, and the next call may cost up to "
            f"{amount_text(amount, next_call)}. "
            f"Raise {amount} there and rerun: every call already paid for is replayed from the response cache"
        )


def scope_name(scope: str | None) -> str:
    """A budget's scope as the lines about it name it, with its config key."""
    return "the run (spend.budget)" if scope is None else f"study {scope} (studies.{scope}.budget)"


def amount_text(name: str, value: float) -> str:
    return f"${value:.4f}" if name == "usd" else f"{int(value):,} {name.replace('_', ' ')}"


def sums(spent: dict[str, Any], study: str | None = None) -> Charge:
    """What the ledger's `spent` part sums to, over every study or one."""
    return sum((Charge.of(row) for row in by_method(spent) if study in (None, row["study"])), Charge())


@dataclass(frozen=True)
class Hold:
    """A call's place in the ledger while it is in flight: its worst case, held against the budgets."""

    key: str
    study: str
    method: str
    model: str
    worst: Charge


def by_method(spent: dict[str, Any]) -> list[dict[str, Any]]:
    """The ledger's `spent` part as rows: study, method, and its calls, tokens and dollars (its models'
    summed)."""
    rows = []
    for study, methods in spent.items():
        for method, models in methods.items():
            row = {"study": study, "method": method, "calls": 0, **asdict(Charge())}
            for amounts in models.values():
                for key in ("calls", *AMOUNTS):
                    row[key] += amounts[key]
            rows.append(row)
    return rows


class LedgerError(ValueError):
    """A spend file that is not what hivebench wrote (edited by hand, or from another tool)."""


class Ledger:
    """The results folder's ledger (`folder`/ledger.json), checked against `budgets`."""

    def __init__(self, budgets: Budgets, folder: Path = SPEND_DIR):
        self.budgets = budgets
        self.path = folder / "ledger.json"
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = FileLock(folder / "ledger.lock")
        self.host, self.pid = socket.gethostname(), os.getpid()

    def read(self) -> dict[str, Any]:
        """The ledger as it stands (its file is replaced whole, so a read needs no lock)."""
        return read_ledger(self.path)

    def hold(self, study: str, method: str, model: str, worst: Charge, lapse_s: float) -> Hold | None:
        """Hold `worst` for a call of `study`, or None where it fits only once calls in flight have
        settled (ask again). Raises BudgetReached where it does not fit beside what is spent, whatever
        settles. A lapsed hold (its job died mid-call) is charged at its worst: its call may have been
        billed."""
        with self.lock:
            ledger = self.read()
            now = time.time()
            lapsed = [key for key, held in ledger["held"].items() if self._lapsed(held, now)]
            for key in lapsed:
                held = ledger["held"].pop(key)
                _charge(ledger["spent"], held["study"], held["method"], held["model"], Charge.of(held))
            if lapsed:
                write_locked(ledger, self.path)
            for scope, budget in self.budgets.scopes(study):
                spent = sums(ledger["spent"], scope)
                over = budget.over(spent + worst)
                if over is not None:
                    raise BudgetReached(scope, over, spent, budget, worst)
                mine = [h for h in ledger["held"].values() if scope in (None, h["study"])]
                if budget.over(spent + sum((Charge.of(h) for h in mine), Charge()) + worst) is not None:
                    return None
            hold = Hold(secrets.token_hex(8), study, method, model, worst)
            ledger["held"][hold.key] = {
                "study": study,
                "method": method,
                "model": model,
                **asdict(worst),
                "host": self.host,
                "pid": self.pid,
                "until": now + lapse_s,
            }
            write_locked(ledger, self.path)
            return hold

    def renew(self, hold: Hold, lapse_s: float) -> None:
        """Keep a hold from lapsing for `lapse_s` more seconds (its call waits at a rate limit)."""
        with self.lock:
            ledger = self.read()
            if hold.key in ledger["held"]:
                ledger["held"][hold.key]["until"] = time.time() + lapse_s
                write_locked(ledger, self.path)

    def settle(self, hold: Hold, cost: Charge | None) -> None:
        """End a hold: `cost` is what its call cost, None where no call was made (it failed for good)."""
        with self.lock:
            ledger = self.read()
            lapsed = ledger["held"].pop(hold.key, None) is None  # then charged at its worst already
            if cost is not None and not lapsed:
                _charge(ledger["spent"], hold.study, hold.method, hold.model, cost)
            write_locked(ledger, self.path)

    def _lapsed(self, hold: dict[str, Any], now: float) -> bool:
        """A hold whose job is seen to be gone (on this machine), or whose time is up (elsewhere)."""
        if hold["host"] != self.host:
            return hold["until"] < now
        if hold["pid"] == self.pid:
            return False
        try:
            os.kill(hold["pid"], 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return hold["until"] < now
        return hold["until"] < now


def _charge(spent: dict[str, Any], study: str, method: str, model: str, cost: Charge) -> None:
    counted = spent.setdefault(study, {}).setdefault(method, {}).setdefault(model, {"calls": 0, **asdict(Charge())})
    counted["calls"] += 1
    for k in AMOUNTS:
        counted[k] += getattr(cost, k)


def write_locked(value: Any, path: Path) -> None:
    """A small JSON file replaced whole, by the holder of its lock alone (so one temporary name serves:
    store.write_json's unique names and sweep cost more than the rest of a call's bookkeeping)."""
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(json.dumps(value), encoding="utf-8")
    os.replace(temp, path)


def read_ledger(path: Path) -> dict[str, Any]:
    """A ledger file's content (an empty ledger where there is none); LedgerError for one that is not a
    ledger."""
    try:
        ledger = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"spent": {}, "held": {}}
    except (ValueError, UnicodeDecodeError) as exc:
        raise LedgerError(
            f"{path}: not a hivebench spend ledger ({exc}); restore it, or remove it to count anew"
        ) from None
    if (
        not isinstance(ledger, dict)
        or not isinstance(ledger.get("spent"), dict)
        or not isinstance(ledger.get("held"), dict)
    ):
        raise LedgerError(f"{path}: not a hivebench spend ledger (no spent and held parts); restore it, or remove it")
    return ledger
