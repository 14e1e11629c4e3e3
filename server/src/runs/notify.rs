//! Notices that an approval waits (PRODUCT §3.14): a JSON POST to each
//! webhook the approval names, which must be one the operator configured
//! (`[[webhooks]]`). A notice carries an approver link made for it, never
//! an edit token. A webhook that fails is tried again a few times, then
//! logged; it never fails the run.

use std::sync::Arc;
use std::time::Duration;

use graph::{Graph, ModuleConfig};
use serde::Serialize;

use crate::config::WebhookConfig;
use crate::store::Store;

/// How often a notice is tried, and the wait before the first retry
/// (doubled after each).
const ATTEMPTS: u32 = 4;
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest one attempt may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Sends notices for this server.
pub struct Notifier {
    webhooks: Vec<WebhookConfig>,
    public_url: Option<String>,
    client: reqwest::Client,
    store: Store,
}

/// What a webhook receives.
#[derive(Debug, Serialize)]
pub struct Notice {
    pub event: &'static str,
    pub run_id: String,
    pub graph_id: Option<String>,
    pub module_id: String,
    pub module_label: String,
    pub activation: u32,
    pub asked: String,
    pub deadline_at: Option<i64>,
    /// A link that can decide this run's approvals and nothing else.
    pub approver_url: Option<String>,
}

/// An approval that now waits, as its run's record says.
pub struct Waiting<'a> {
    pub run_id: &'a str,
    pub graph_id: Option<&'a str>,
    pub module_id: &'a str,
    pub activation: u32,
    pub asked: &'a str,
    pub deadline_at: Option<i64>,
}

impl Notifier {
    pub fn new(webhooks: Vec<WebhookConfig>, public_url: Option<String>, store: Store) -> Notifier {
        engine::tls::install();
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .unwrap_or_default();
        Notifier {
            webhooks,
            public_url: public_url.map(|url| url.trim_end_matches('/').to_owned()),
            client,
            store,
        }
    }

    /// The ids a graph may name.
    pub fn ids(&self) -> Vec<String> {
        self.webhooks
            .iter()
            .map(|webhook| webhook.id.clone())
            .collect()
    }

    /// Sends, in the background, the notices an approval of `graph` that
    /// now waits asks for.
    pub fn waiting(self: &Arc<Self>, graph: &Graph, waiting: Waiting<'_>) {
        let Some(module) = graph
            .modules
            .iter()
            .find(|module| module.id == waiting.module_id)
        else {
            return;
        };
        // An approval, or an agent task's tool calls (PRODUCT §3.17).
        let (notify, event) = match &module.config {
            ModuleConfig::Approval(config) => (&config.notify, "approval.waiting"),
            ModuleConfig::AgentTask(task) => (&task.notify, "tool_call.waiting"),
            _ => return,
        };
        let targets: Vec<WebhookConfig> = notify
            .iter()
            .filter_map(|id| self.webhooks.iter().find(|webhook| &webhook.id == id))
            .cloned()
            .collect();
        if targets.is_empty() {
            return;
        }
        let mut notice = Notice {
            event,
            run_id: waiting.run_id.to_owned(),
            graph_id: waiting.graph_id.map(str::to_owned),
            module_id: module.id.clone(),
            module_label: module.display_label().to_owned(),
            activation: waiting.activation,
            asked: waiting.asked.to_owned(),
            deadline_at: waiting.deadline_at,
            approver_url: None,
        };
        let notifier = Arc::clone(self);
        tokio::spawn(async move {
            notice.approver_url = notifier.approver_url(&notice).await;
            for target in targets {
                notifier.send(&target, &notice).await;
            }
        });
    }

    /// A new approver link for the notice's run, whole when the server
    /// knows its address.
    async fn approver_url(&self, notice: &Notice) -> Option<String> {
        let graph_id = notice.graph_id.as_deref()?;
        match crate::decisions_api::make_approver_link(&self.store, graph_id, &notice.run_id).await
        {
            Ok(link) => Some(match &self.public_url {
                Some(base) => format!("{base}{}", link.url),
                None => link.url,
            }),
            Err(error) => {
                tracing::warn!(run = %notice.run_id, error = %error.message(), "an approver link could not be made for a notice");
                None
            }
        }
    }

    async fn send(&self, target: &WebhookConfig, notice: &Notice) {
        let mut wait = FIRST_RETRY;
        for attempt in 1..=ATTEMPTS {
            let sent = self.client.post(&target.url).json(notice).send().await;
            match sent {
                Ok(response) if response.status().is_success() => return,
                Ok(response) => tracing::warn!(
                    webhook = %target.id, run = %notice.run_id, attempt, status = %response.status(),
                    "a webhook refused a notice"
                ),
                Err(error) => tracing::warn!(
                    webhook = %target.id, run = %notice.run_id, attempt, %error,
                    "a notice could not be sent"
                ),
            }
            if attempt < ATTEMPTS {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
        tracing::error!(webhook = %target.id, run = %notice.run_id, "a notice was given up after {ATTEMPTS} attempts");
    }
}
