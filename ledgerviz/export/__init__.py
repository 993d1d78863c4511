"""The frames on disk and on clusters: their Parquet schema (``parquet``), the part files
holding many sessions each (``parts``), the incremental dataset of ledger files
(``dataset``), and the same on Dask (``dask``); and sessions as OpenTelemetry traces
(``otlp``)."""

from ledgerviz.export.dataset import MANIFEST_NAME, ExportError, ExportSummary, export, read_export
from ledgerviz.export.otlp import OtlpError, OtlpSummary, export_otlp, to_otlp

__all__ = ["MANIFEST_NAME", "ExportError", "ExportSummary", "OtlpError", "OtlpSummary", "export",
           "export_otlp", "read_export", "to_otlp"]
