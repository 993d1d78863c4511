"""The ``ledgerviz`` command: one sub-command per module in this package."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from ledgerviz import __version__
from ledgerviz.cli.output import OUTPUT_ERROR_EXIT, OutputError
from ledgerviz.cli.stdout import discard_stdout, guarded_stdout
from ledgerviz.cli.terminate import TERMINATED_EXIT, Terminated, terminate_as_exception
from ledgerviz.cli.text import say_error

COMMANDS = ("check", "repair", "fork", "simulate", "report", "export", "diff", "otlp")

EXIT_CODES = """\
exit codes (the same in every command):
  0  done; no ledger read has an error-level problem
  1  a ledger has error-level problems: check lists them, report is still
     written, repair prints nothing and says what to fix first
  2  a PATH cannot be read, an output cannot be written, or bad arguments
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM); no partial output is left behind
"""
INTERRUPTED_EXIT = 130

class _HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual but prints the exit-code table as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text == EXIT_CODES:
            return text
        return super()._fill_text(text, width, indent)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="ledgerviz",
        description="Read, check, repair and draw agent session ledgers.",
        epilog=EXIT_CODES,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ledgerviz {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"ledgerviz.cli.{name}").register(subparsers)
    for command in subparsers.choices.values():
        command.epilog = EXIT_CODES
        command.formatter_class = _HelpFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code (printing help when none is given)."""
    parser = build_parser()
    command = "help"
    try:
        with terminate_as_exception(), guarded_stdout():
            args = parser.parse_args(argv)
            if args.command is None:
                parser.print_help()
                return 2
            command = args.command
            return int(args.run(args))
    except OutputError as error:  # stdout failed: ``... | head`` once head has gone
        discard_stdout()
        say_error(command, error)
        return OUTPUT_ERROR_EXIT
    except KeyboardInterrupt:  # Ctrl-C
        say_error(command, "interrupted")
        return INTERRUPTED_EXIT
    except Terminated:
        say_error(command, "terminated")
        return TERMINATED_EXIT
