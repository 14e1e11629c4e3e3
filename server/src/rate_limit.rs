//! How many runs one client may start: a token bucket per client address
//! (governor's GCRA), `per_minute` at once and one more every
//! `60 / per_minute` seconds. Clients on this machine are exempt unless
//! the operator says otherwise, so tests and benchmarks are not throttled.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::error::ApiError;
use crate::settings::RunLimits;

/// The address a request came from, when it came over a socket (a request
/// handed to the router in-process has none).
pub struct ClientAddress(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(address)| address.ip()),
        ))
    }
}

/// Whose runs count together: an IPv4 address, or an IPv6 /64 (one
/// client usually has a whole /64 to pick addresses from).
fn client_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            let mut segments = v6.segments();
            segments[4..].fill(0);
            IpAddr::V6(std::net::Ipv6Addr::from(segments))
        }
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

pub struct RunRateLimiter {
    limits: RunLimits,
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    /// Runs started with each run token: a token is a credential handed to
    /// a program, wherever it calls from, so loopback is not exempt.
    tokens: DefaultKeyedRateLimiter<String>,
}

impl RunRateLimiter {
    pub fn new(limits: RunLimits) -> RunRateLimiter {
        let per_minute = NonZeroU32::new(limits.per_minute).unwrap_or(NonZeroU32::MIN);
        RunRateLimiter {
            limits,
            limiter: DefaultKeyedRateLimiter::keyed(Quota::per_minute(per_minute)),
            tokens: DefaultKeyedRateLimiter::keyed(Quota::per_minute(per_minute)),
        }
    }

    /// Counts a run started by `client`; `run.rate_limited` with how long
    /// to wait when it has started too many. A request without an address
    /// came from inside this process.
    pub fn check(&self, client: &ClientAddress) -> Result<(), ApiError> {
        let Some(address) = client.0 else {
            return Ok(());
        };
        let local = match address {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
        };
        if local && !self.limits.limit_loopback {
            return Ok(());
        }
        self.limiter
            .check_key(&client_key(address))
            .map_err(|not_until| {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                ApiError::RateLimited {
                    per_minute: self.limits.per_minute,
                    retry_after_seconds: wait.as_secs().max(1),
                }
            })
    }

    /// Counts a run started with run token `token_id`.
    pub fn check_token(&self, token_id: &str) -> Result<(), ApiError> {
        self.tokens
            .check_key(&token_id.to_owned())
            .map_err(|not_until| ApiError::RateLimited {
                per_minute: self.limits.per_minute,
                retry_after_seconds: not_until
                    .wait_time_from(DefaultClock::default().now())
                    .as_secs()
                    .max(1),
            })
    }

    /// Forgets clients that could start a full bucket again anyway, so the
    /// table does not grow with every address ever seen.
    pub fn forget_idle(&self) {
        self.limiter.retain_recent();
        self.tokens.retain_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(limit_loopback: bool) -> RunRateLimiter {
        RunRateLimiter::new(RunLimits {
            per_minute: 3,
            limit_loopback,
            ..RunLimits::default()
        })
    }

    #[test]
    fn a_client_gets_its_burst_then_waits_and_others_are_not_affected() {
        let limiter = limiter(false);
        let stranger = ClientAddress(Some("203.0.113.9".parse().unwrap()));
        for _ in 0..3 {
            assert!(limiter.check(&stranger).is_ok());
        }
        match limiter.check(&stranger) {
            Err(ApiError::RateLimited {
                per_minute: 3,
                retry_after_seconds,
            }) => assert!((1..=20).contains(&retry_after_seconds)),
            other => panic!("{other:?}"),
        }
        let other = ClientAddress(Some("198.51.100.7".parse().unwrap()));
        assert!(limiter.check(&other).is_ok());
    }

    #[test]
    fn addresses_of_one_ipv6_network_count_together() {
        let limiter = limiter(false);
        for last in 1..=3 {
            let address = ClientAddress(Some(format!("2001:db8:1:2::{last}").parse().unwrap()));
            assert!(limiter.check(&address).is_ok());
        }
        let another_in_the_network = ClientAddress(Some("2001:db8:1:2:ffff::9".parse().unwrap()));
        assert!(limiter.check(&another_in_the_network).is_err());
        let elsewhere = ClientAddress(Some("2001:db8:1:3::1".parse().unwrap()));
        assert!(limiter.check(&elsewhere).is_ok());
    }

    #[test]
    fn a_run_token_is_limited_on_its_own_even_from_loopback() {
        let limiter = limiter(false);
        for _ in 0..3 {
            assert!(limiter.check_token("t_one").is_ok());
        }
        assert!(matches!(
            limiter.check_token("t_one"),
            Err(ApiError::RateLimited { per_minute: 3, .. })
        ));
        assert!(limiter.check_token("t_two").is_ok());
    }

    #[test]
    fn loopback_is_exempt_unless_the_operator_says_otherwise() {
        let local = ClientAddress(Some("127.0.0.1".parse().unwrap()));
        let exempt = limiter(false);
        for _ in 0..10 {
            assert!(exempt.check(&local).is_ok());
        }
        let held = limiter(true);
        let results: Vec<bool> = (0..4).map(|_| held.check(&local).is_ok()).collect();
        assert_eq!(results, [true, true, true, false]);
    }
}
