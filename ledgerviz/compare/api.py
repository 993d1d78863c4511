"""``ledgerviz.diff``: align two sessions and say where they part."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ledgerviz.compare.session_diff import SessionDiff
from ledgerviz.ledger.session import SessionLog
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Policy

if TYPE_CHECKING:
    from ledgerviz.api import Ledger



def diff(a: Ledger | SessionLog | str | os.PathLike[str],
         b: Ledger | SessionLog | str | os.PathLike[str], *,
         policy: Policy = DEFAULT_POLICY) -> SessionDiff:
    """Return the :class:`SessionDiff` of two sessions.

    Each side is a ``Ledger`` holding one session, a ``SessionLog``, or the path of a
    ledger file holding one. Events are aligned by what they did (type, tool, arguments,
    texts, statuses), never by seqs, times or ids; call statuses are compared under
    ``policy``. Raises ``ValueError`` when a side does not hold exactly one session.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    return SessionDiff.of(_one_session(a, "a"), _one_session(b, "b"), policy)

def _one_session(side: Ledger | SessionLog | str | os.PathLike[str], name: str) -> Ledger:
    """Return ``side`` as a one-session ``Ledger``."""
    from ledgerviz.api import Ledger, load

    if isinstance(side, SessionLog):
        return Ledger([side])
    ledger = side if isinstance(side, Ledger) else load(side)
    if len(ledger.sessions) != 1:
        raise ValueError(f"{name} holds {len(ledger.sessions)} sessions; a diff compares one "
                         "session with one (pick one with ledger.session(key))")
    return ledger
