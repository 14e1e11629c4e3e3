//! Every call to a configured provider has an overall deadline on top of
//! the HTTP client's read timeout, which only bounds the wait for each
//! chunk: a provider that sends a keep-alive every few seconds would
//! otherwise hold a run for as long as it likes. The wrapper also names the
//! provider in every error, so a person can tell which one failed.

use std::sync::Arc;
use std::time::Duration;

use super::{ChatRequest, DeltaSink, Provider, ProviderError, ProviderFuture};

/// The deadline of a call when the configuration sets none: long enough
/// for a long streamed reply, short enough that a stuck call ends.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(600);

pub struct Deadline {
    id: String,
    deadline: Duration,
    inner: Arc<dyn Provider>,
}

impl Deadline {
    pub fn new(id: &str, deadline: Duration, inner: Arc<dyn Provider>) -> Deadline {
        Deadline {
            id: id.to_owned(),
            deadline,
            inner,
        }
    }
}

impl Provider for Deadline {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            match tokio::time::timeout(self.deadline, self.inner.complete(request, on_delta)).await
            {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(error)) => Err(ProviderError {
                    message: format!("provider \"{}\": {}", self.id, error.message),
                    ..error
                }),
                // Not retried: another attempt would wait as long again.
                Err(_) => Err(ProviderError::fatal(format!(
                    "provider \"{}\" timed out after {} s, its deadline for one call (deadline_seconds)",
                    self.id,
                    self.deadline.as_secs_f64()
                ))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ChatResponse;

    /// Streams a word every 10 ms for 10 s.
    struct Trickle;

    impl Provider for Trickle {
        fn complete<'a>(
            &'a self,
            _request: &'a ChatRequest,
            on_delta: DeltaSink<'a>,
        ) -> ProviderFuture<'a> {
            Box::pin(async move {
                for _ in 0..1000 {
                    on_delta("more ");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Ok(ChatResponse {
                    text: "done".to_owned(),
                    usage: crate::provider::Usage::default(),
                    finish_reason: None,
                    tool_calls: Vec::new(),
                    cost: None,
                })
            })
        }
    }

    #[tokio::test]
    async fn a_call_that_never_ends_fails_at_its_deadline_naming_the_provider() {
        let provider = Deadline::new("local", Duration::from_millis(100), Arc::new(Trickle));
        let request = ChatRequest {
            model: "m".to_owned(),
            system: None,
            messages: Vec::new(),
            temperature: None,
            max_tokens: None,
            response_schema: None,
            tools: Vec::new(),
        };
        let mut received = 0;
        let mut sink = |_: &str| received += 1;
        let started = std::time::Instant::now();
        let error = provider.complete(&request, &mut sink).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(!error.retryable);
        assert_eq!(
            error.message,
            "provider \"local\" timed out after 0.1 s, its deadline for one call (deadline_seconds)"
        );
        assert!(received > 0, "it did stream until then");
    }
}
