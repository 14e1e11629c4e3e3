//! Retrying provider calls: 429, 5xx, timeouts and cut streams are tried
//! again with exponential backoff and jitter, a bounded number of times;
//! then the module fails with the provider's own message.

use std::future::Future;
use std::time::Duration;

use super::{ChatResponse, ProviderError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (docs/manual/configuration.md: "retried up to 4
    /// times" is 5 of them).
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; a longer one fails at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1` (attempt counts from 1): what
    /// the provider asked for, or the exponential step with "equal jitter" —
    /// half of it fixed, half drawn at random — so that many runs failing
    /// together (200 concurrent runs meeting one 429) do not all come back
    /// at the same instant.
    fn backoff(&self, attempt: u32, error: &ProviderError) -> Option<Duration> {
        if let Some(seconds) = error.retry_after_seconds {
            let asked = Duration::from_secs(seconds);
            return (asked <= self.max_retry_after).then_some(asked);
        }
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let step = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        let half = step / 2;
        Some(half + half.mul_f64(rand::random::<f64>()))
    }
}

/// Runs `call` (given the attempt number, from 1) until it succeeds, fails
/// for good, or the attempts run out.
pub async fn with_retries<F, Fut>(
    policy: RetryPolicy,
    mut call: F,
) -> Result<ChatResponse, ProviderError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<ChatResponse, ProviderError>>,
{
    let mut attempt = 1;
    loop {
        match call(attempt).await {
            Ok(response) => return Ok(response),
            Err(error) if !error.retryable || attempt >= policy.max_attempts.max(1) => {
                return Err(if attempt > 1 {
                    ProviderError {
                        message: format!("{} (after {attempt} attempts)", error.message),
                        ..error
                    }
                } else {
                    error
                });
            }
            Err(error) => {
                let Some(wait) = policy.backoff(attempt, &error) else {
                    return Err(ProviderError {
                        message: format!(
                            "{} (the provider asked to wait {} s, longer than this server waits)",
                            error.message,
                            error.retry_after_seconds.unwrap_or_default()
                        ),
                        retryable: false,
                        ..error
                    });
                };
                tracing::warn!(attempt, ?wait, error = %error.message, "provider call failed; retrying");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Usage;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn quick() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_retry_after: Duration::from_secs(1),
        }
    }

    fn ok() -> ChatResponse {
        ChatResponse {
            text: "fine".to_owned(),
            usage: Usage::default(),
            finish_reason: None,
            tool_calls: Vec::new(),
            cost: None,
        }
    }

    #[tokio::test]
    async fn a_429_is_retried_until_it_succeeds() {
        let calls = AtomicU32::new(0);
        let result = with_retries(quick(), |_| {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if call == 0 {
                    Err(ProviderError::from_status(429, "slow down", None))
                } else {
                    Ok(ok())
                }
            }
        })
        .await;
        assert_eq!(result.unwrap().text, "fine");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn retries_stop_at_the_cap_with_the_providers_message() {
        let calls = AtomicU32::new(0);
        let error = with_retries(quick(), |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err(ProviderError::from_status(503, "overloaded", None)) }
        })
        .await
        .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(error.message, "overloaded (after 3 attempts)");
    }

    #[test]
    fn backoff_doubles_within_its_cap_and_spreads_the_waits() {
        let policy = RetryPolicy::default();
        let error = ProviderError::from_status(503, "overloaded", None);
        for attempt in 1..=6 {
            let step = policy
                .initial_backoff
                .saturating_mul(2u32.pow(attempt - 1))
                .min(policy.max_backoff);
            let waits: Vec<Duration> = (0..50)
                .map(|_| policy.backoff(attempt, &error).unwrap())
                .collect();
            assert!(
                waits.iter().all(|wait| *wait >= step / 2 && *wait <= step),
                "attempt {attempt}: {waits:?} outside {:?}..={step:?}",
                step / 2
            );
            let distinct: std::collections::BTreeSet<Duration> = waits.into_iter().collect();
            assert!(
                distinct.len() > 10,
                "attempt {attempt}: the waits hardly differ"
            );
        }
        // What the provider asks for is waited exactly.
        let asked = ProviderError::from_status(429, "slow down", Some(3));
        assert_eq!(policy.backoff(1, &asked), Some(Duration::from_secs(3)));
    }

    #[tokio::test]
    async fn a_400_is_not_retried() {
        let calls = AtomicU32::new(0);
        let error = with_retries(quick(), |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err(ProviderError::from_status(400, "bad model", None)) }
        })
        .await
        .unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(error.message, "bad model");
    }
}
