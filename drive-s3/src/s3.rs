//! The S3 client: `object_store`'s `AmazonS3`, path-style, with its own retries off (the driver
//! retries per the scenario's `store.retry`, see `fetch`) and no overall request timeout (the
//! driver bounds the wait for each body chunk with `store.timeout` instead, since a large read at
//! a modest bandwidth may rightly take longer than any fixed total).

use object_store::aws::AmazonS3Builder;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// Where the objects are and how to sign for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Endpoint {
    /// e.g. `http://127.0.0.1:9000` (plain http is allowed).
    pub endpoint: String,
    pub bucket: String,
    /// Without keys, requests are sent unsigned (a public bucket).
    pub access_key: Option<String>,
    pub secret_key: Option<String>,
    /// Default `us-east-1`; only with keys (it signs).
    pub region: Option<String>,
}

/// A client that cannot be built from the options given.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("give both --access-key and --secret-key, or neither (unsigned requests)")]
    HalfCredentials,
    #[error(
        "--region {0}: the region is used to sign requests, and without --access-key and \
         --secret-key they are sent unsigned; give the keys or leave --region out"
    )]
    RegionWithoutKeys(String),
    #[error("the endpoint `{0}` is not an http:// or https:// URL")]
    BadEndpoint(String),
    #[error("cannot build the S3 client: {0}")]
    Build(#[from] object_store::Error),
}

/// Builds the client for `e`.
pub fn connect(e: &S3Endpoint) -> Result<Arc<dyn ObjectStore>, ConnectError> {
    if !(e.endpoint.starts_with("http://") || e.endpoint.starts_with("https://")) {
        return Err(ConnectError::BadEndpoint(e.endpoint.clone()));
    }
    let client = ClientOptions::new()
        .with_allow_http(true)
        .with_timeout_disabled()
        .with_connect_timeout(Duration::from_secs(10));
    let retry = RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: 0,
        retry_timeout: Duration::from_secs(1),
    };
    let mut b = AmazonS3Builder::new()
        .with_endpoint(&e.endpoint)
        .with_bucket_name(&e.bucket)
        .with_region(e.region.as_deref().unwrap_or("us-east-1"))
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .with_retry(retry)
        .with_client_options(client);
    match (&e.access_key, &e.secret_key) {
        (Some(k), Some(s)) => {
            b = b.with_access_key_id(k).with_secret_access_key(s);
        }
        // Unsigned: never fall back to instance-metadata credentials. A region would be
        // accepted and never used.
        (None, None) => {
            if let Some(region) = &e.region {
                return Err(ConnectError::RegionWithoutKeys(region.clone()));
            }
            b = b.with_skip_signature(true)
        }
        _ => return Err(ConnectError::HalfCredentials),
    }
    Ok(Arc::new(b.build()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> S3Endpoint {
        S3Endpoint {
            endpoint: "http://127.0.0.1:1".into(),
            bucket: "b".into(),
            access_key: Some("k".into()),
            secret_key: Some("s".into()),
            region: None,
        }
    }

    #[test]
    fn builds_offline_and_refuses_bad_options() {
        assert!(connect(&endpoint()).is_ok());
        let half = S3Endpoint {
            secret_key: None,
            ..endpoint()
        };
        assert!(matches!(connect(&half), Err(ConnectError::HalfCredentials)));
        let bad = S3Endpoint {
            endpoint: "127.0.0.1:9000".into(),
            ..endpoint()
        };
        assert!(matches!(connect(&bad), Err(ConnectError::BadEndpoint(_))));
        let unsigned = S3Endpoint {
            access_key: None,
            secret_key: None,
            ..endpoint()
        };
        assert!(connect(&unsigned).is_ok());
        let unsigned_region = S3Endpoint {
            region: Some("eu-west-1".into()),
            ..unsigned
        };
        match connect(&unsigned_region) {
            Err(e @ ConnectError::RegionWithoutKeys(_)) => {
                assert!(e.to_string().contains("--region eu-west-1"), "{e}")
            }
            other => panic!("expected the region refused, got {:?}", other.err()),
        }
    }
}
