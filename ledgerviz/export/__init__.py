"""The frames on disk and on clusters: their Parquet schema and partition files (``parquet``),
the incremental dataset of ledger files (``dataset``), and the same on Dask (``dask``)."""

from ledgerviz.export.dataset import MANIFEST_NAME, ExportError, ExportSummary, export, read_export

__all__ = ["MANIFEST_NAME", "ExportError", "ExportSummary", "export", "read_export"]
