"""An object store reached through pyarrow's filesystems, configured from the environment variables
LanceDB reads (so that the files beside the tables are read from where the tables are), under the
store deadline (store.py). pyarrow is imported when first needed: a server of a local index reads
its manifest without it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow.fs as pafs

from .errors import IndexStoreError
from .store import STORE_RETRIES, store_deadline


def remote_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem and path of an object-store URI."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    scheme, _, path = uri.partition("://")
    env = os.environ.get
    endpoint = env("AWS_ENDPOINT_URL") or env("AWS_ENDPOINT")
    if scheme in ("s3", "s3a") and endpoint:
        if endpoint.startswith("http://") and env("AWS_ALLOW_HTTP", "").lower() not in ("1", "true", "yes", "on"):
            raise IndexStoreError(f"the S3 endpoint {endpoint} is plain http; set AWS_ALLOW_HTTP=true to use it")
        region = env("AWS_REGION") or env("AWS_DEFAULT_REGION")
        return pafs.S3FileSystem(endpoint_override=endpoint, region=region, **_s3_deadline()), path
    if scheme in ("az", "azure"):
        account = env("AZURE_STORAGE_ACCOUNT_NAME")
        if not account:
            raise IndexStoreError(
                f"{scheme}:// URIs need AZURE_STORAGE_ACCOUNT_NAME (and AZURE_STORAGE_ACCOUNT_KEY) set"
            )
        return pafs.AzureFileSystem(account, account_key=env("AZURE_STORAGE_ACCOUNT_KEY")), path
    try:
        fs, path = pafs.FileSystem.from_uri(uri)
    except pa.ArrowInvalid:
        raise IndexStoreError(
            f"{scheme}:// is not a supported storage scheme; use a local path or s3://, gs://, az://"
        ) from None
    if isinstance(fs, pafs.S3FileSystem):  # AWS itself: the region found, the deadline added
        fs = pafs.S3FileSystem(region=fs.region, **_s3_deadline())
    return fs, path


def _s3_deadline() -> dict[str, Any]:
    """pyarrow S3FileSystem's timeouts and retries under the store deadline (store.py)."""
    import pyarrow.fs as pafs

    return {
        **store_deadline().arrow_options(),
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=STORE_RETRIES + 1),
    }


def missing_bucket(uri: str) -> str | None:
    """One line saying that the bucket (or container) of an object-store URI does not exist, or None."""
    import pyarrow.fs as pafs

    fs, path = remote_filesystem(uri)
    bucket = path.split("/", 1)[0]
    if fs.get_file_info(bucket).type != pafs.FileType.NotFound:
        return None
    return f"{uri}: the bucket {bucket!r} does not exist; create it or fix --index"


def joined(uri: str, name: str) -> str:
    """The URI of `name` under the prefix `uri`."""
    return f"{uri.rstrip('/')}/{name}"
