//! s3s-fs with a faster GetObject body.
//!
//! s3s-fs 0.14 streams an object through `ReaderStream::with_capacity(tokio::fs::File, 4096)`:
//! every 4 KiB is one blocking-pool round trip, which caps a GET at about 70 MiB/s on these
//! machines, below the bandwidths the test bed injects. [`FastGetFs`] delegates every operation
//! to s3s-fs and only swaps the GetObject body for one read by a blocking task in
//! [`CHUNK_BYTES`] pieces; headers, ranges, ETags and errors stay s3s-fs's own.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use s3s::dto::*;
use s3s::stream::{ByteStream, RemainingLength};
use s3s::{S3Request, S3Response, S3Result, StdError, S3};
use tokio::sync::mpsc;

/// Bytes per body chunk: large enough to stream at GiB/s, small enough that a GET shows
/// progress long before it ends.
pub const CHUNK_BYTES: usize = 256 * 1024;
/// Chunks read ahead of the connection.
const CHUNKS_AHEAD: usize = 4;

/// s3s-fs's `FileSystem` with GetObject bodies read in [`CHUNK_BYTES`] pieces.
pub(crate) struct FastGetFs {
    inner: s3s_fs::FileSystem,
    /// The canonical root directory, as s3s-fs resolves it.
    root: PathBuf,
}

impl FastGetFs {
    pub(crate) fn new(inner: s3s_fs::FileSystem, root: PathBuf) -> Self {
        FastGetFs { inner, root }
    }

    /// The file holding `bucket/key`, if both are plain relative names (s3s-fs resolves the
    /// odd ones itself, and for those its own body is kept).
    fn object_path(&self, bucket: &str, key: &str) -> Option<PathBuf> {
        let plain = |s: &str| {
            !s.is_empty()
                && !s.starts_with('/')
                && !s.contains('\\')
                && s.split('/')
                    .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        };
        (plain(bucket) && !bucket.contains('/') && plain(key))
            .then(|| self.root.join(bucket).join(key))
    }
}

/// `bytes FIRST-LAST/TOTAL` to (FIRST, LAST + 1 - FIRST).
fn parse_content_range(s: &str) -> Option<(u64, u64)> {
    let (span, _total) = s.strip_prefix("bytes ")?.split_once('/')?;
    let (first, last) = span.split_once('-')?;
    let first: u64 = first.parse().ok()?;
    let last: u64 = last.parse().ok()?;
    (last >= first).then(|| (first, last - first + 1))
}

/// A body read by a blocking task and handed over through a bounded channel.
struct ChunkStream {
    rx: mpsc::Receiver<Result<Bytes, std::io::Error>>,
    remaining: usize,
}

impl ChunkStream {
    fn spawn(path: PathBuf, start: u64, len: usize) -> ChunkStream {
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        tokio::task::spawn_blocking(move || {
            let result = (|| -> std::io::Result<()> {
                let mut file = std::fs::File::open(&path)?;
                file.seek(SeekFrom::Start(start))?;
                let mut left = len;
                while left > 0 {
                    let mut buf = vec![0u8; left.min(CHUNK_BYTES)];
                    file.read_exact(&mut buf)?;
                    left -= buf.len();
                    if tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
                        return Ok(()); // the client went away
                    }
                }
                Ok(())
            })();
            if let Err(e) = result {
                let _ = tx.blocking_send(Err(e));
            }
        });
        ChunkStream { rx, remaining: len }
    }
}

impl futures::Stream for ChunkStream {
    type Item = Result<Bytes, StdError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(bytes))) => {
                self.remaining = self.remaining.saturating_sub(bytes.len());
                Poll::Ready(Some(Ok(bytes)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ByteStream for ChunkStream {
    fn remaining_length(&self) -> RemainingLength {
        RemainingLength::new_exact(self.remaining)
    }
}

/// The `S3` impl: each listed operation delegated to s3s-fs unchanged, GetObject swapped.
/// (The whole impl is generated so that `async_trait` sees the expanded methods.)
macro_rules! s3_impl {
    ($($op:ident($input:ty) -> $output:ty;)*) => {
        #[async_trait::async_trait]
        impl S3 for FastGetFs {
            $(
                async fn $op(&self, req: S3Request<$input>) -> S3Result<S3Response<$output>> {
                    self.inner.$op(req).await
                }
            )*

            async fn get_object(
                &self,
                req: S3Request<GetObjectInput>,
            ) -> S3Result<S3Response<GetObjectOutput>> {
                self.get_object_fast(req).await
            }

            async fn head_object(
                &self,
                req: S3Request<HeadObjectInput>,
            ) -> S3Result<S3Response<HeadObjectOutput>> {
                self.head_object_s3(req).await
            }
        }
    };
}

s3_impl! {
    create_bucket(CreateBucketInput) -> CreateBucketOutput;
    copy_object(CopyObjectInput) -> CopyObjectOutput;
    delete_bucket(DeleteBucketInput) -> DeleteBucketOutput;
    delete_object(DeleteObjectInput) -> DeleteObjectOutput;
    delete_objects(DeleteObjectsInput) -> DeleteObjectsOutput;
    get_bucket_location(GetBucketLocationInput) -> GetBucketLocationOutput;
    head_bucket(HeadBucketInput) -> HeadBucketOutput;
    list_buckets(ListBucketsInput) -> ListBucketsOutput;
    list_objects(ListObjectsInput) -> ListObjectsOutput;
    list_objects_v2(ListObjectsV2Input) -> ListObjectsV2Output;
    put_object(PutObjectInput) -> PutObjectOutput;
    create_multipart_upload(CreateMultipartUploadInput) -> CreateMultipartUploadOutput;
    upload_part(UploadPartInput) -> UploadPartOutput;
    upload_part_copy(UploadPartCopyInput) -> UploadPartCopyOutput;
    list_parts(ListPartsInput) -> ListPartsOutput;
    complete_multipart_upload(CompleteMultipartUploadInput) -> CompleteMultipartUploadOutput;
    abort_multipart_upload(AbortMultipartUploadInput) -> AbortMultipartUploadOutput;
}

impl FastGetFs {
    /// HeadObject as S3 answers it: a key that is not an object (missing, or a "directory"
    /// prefix of other keys) is 404 NoSuchKey. s3s-fs answers a prefix with 500, which readers
    /// probing a path (pyarrow's `get_file_info`) trip on.
    async fn head_object_s3(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let is_file = self
            .object_path(&req.input.bucket, &req.input.key)
            .is_some_and(|p| p.is_file());
        if !is_file {
            return Err(s3s::s3_error!(
                NoSuchKey,
                "no object called {}",
                req.input.key
            ));
        }
        self.inner.head_object(req).await
    }

    /// s3s-fs's GetObject (headers, range checks, ETag, errors) with our body.
    async fn get_object_fast(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let path = self.object_path(&req.input.bucket, &req.input.key);
        let mut response = self.inner.get_object(req).await?;
        let output = &mut response.output;
        let len = output.content_length.and_then(|n| u64::try_from(n).ok());
        let span = match (&output.content_range, len) {
            (Some(range), _) => parse_content_range(range),
            (None, Some(len)) => Some((0, len)),
            (None, None) => None,
        };
        if let (Some(path), Some((start, len))) = (path, span) {
            if let Ok(len) = usize::try_from(len) {
                // Dropping s3s-fs's stream only closes its file handle.
                output.body = Some(StreamingBlob::new(ChunkStream::spawn(path, start, len)));
            }
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_parse() {
        assert_eq!(parse_content_range("bytes 0-4095/10000"), Some((0, 4096)));
        assert_eq!(
            parse_content_range("bytes 9999-9999/10000"),
            Some((9999, 1))
        );
        assert_eq!(parse_content_range("bytes 5-4/10"), None);
        assert_eq!(parse_content_range("items 0-1/2"), None);
        assert_eq!(parse_content_range("bytes x-1/2"), None);
    }
}
