"""Rich notebook displays: HTML fragments and stylesheet shared by the reprs, the report and
the explorer's panes, and the reprs of ``Ledger``, ``RecoveryView``, ``Frames`` and ``Context``.

Every ledger string is escaped; every display is bounded (rows past a limit are counted in a
footer, never drawn).
"""

from ledgerviz.display.fragments import Part, Table, badge, cell, empty_note, expandable

__all__ = ["Part", "Table", "badge", "cell", "empty_note", "expandable"]
