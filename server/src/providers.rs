//! The providers this server offers: the built-in simulator always, the
//! configured ones whose keys are present, and OpenAI / Anthropic when only
//! their usual key variables are set. What `GET /api/providers` lists.

use std::sync::Arc;
use std::time::Duration;

use engine::provider::anthropic::AnthropicProvider;
use engine::provider::deadline::{DEFAULT_DEADLINE, Deadline};
use engine::provider::openai::OpenAiProvider;
use engine::provider::sim::{self, SimProvider};
use engine::provider::{Provider, ProviderInfo, ProviderRegistry};

use crate::config::{ConfigFile, ProviderConfig, ProviderKind};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const DEFAULT_SIM_LATENCY_MS: u64 = 25;

/// The simulator's pause per streamed word (the sim provider and the
/// simulated coding agent share it).
pub fn sim_latency_ms(file: &ConfigFile) -> u64 {
    file.sim
        .latency_ms_per_token
        .unwrap_or(DEFAULT_SIM_LATENCY_MS)
}

fn sim_info() -> ProviderInfo {
    ProviderInfo {
        id: sim::PROVIDER_ID.to_owned(),
        label: "Simulated".to_owned(),
        models: sim::MODELS
            .iter()
            .map(|model| (*model).to_owned())
            .collect(),
        simulated: true,
        prices: std::collections::BTreeMap::new(),
        tool_calling: true,
    }
}

fn build_one(
    config: &ProviderConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(ProviderInfo, Arc<dyn Provider>), String> {
    let key = match &config.api_key_env {
        Some(variable) => match lookup(variable) {
            Some(key) if !key.trim().is_empty() => key,
            _ => return Err(format!("{variable} is not set")),
        },
        // Local servers (Ollama, llama.cpp) often need no key.
        None => String::new(),
    };
    let timeout = config
        .timeout_seconds
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let (label, provider): (&str, Arc<dyn Provider>) = match config.kind {
        ProviderKind::Openai => (
            "OpenAI-compatible",
            Arc::new(
                OpenAiProvider::new(
                    config
                        .base_url
                        .as_deref()
                        .unwrap_or("https://api.openai.com/v1"),
                    &key,
                    timeout,
                )
                .map_err(|error| error.message)?,
            ),
        ),
        ProviderKind::Anthropic => (
            "Anthropic",
            Arc::new(
                AnthropicProvider::new(
                    config
                        .base_url
                        .as_deref()
                        .unwrap_or("https://api.anthropic.com"),
                    &key,
                    timeout,
                )
                .map_err(|error| error.message)?,
            ),
        ),
    };
    let deadline = config
        .deadline_seconds
        .map_or(DEFAULT_DEADLINE, Duration::from_secs);
    let provider: Arc<dyn Provider> = Arc::new(Deadline::new(&config.id, deadline, provider));
    Ok((
        ProviderInfo {
            id: config.id.clone(),
            label: config.label.clone().unwrap_or_else(|| label.to_owned()),
            models: config.models.clone(),
            simulated: false,
            prices: config.prices.clone(),
            tool_calling: config.tools.unwrap_or(true),
        },
        provider,
    ))
}

/// The registry for `file`, reading key variables through `lookup` (the
/// environment, in the server). Providers that cannot be built are left out
/// with a warning, never with their key in it.
pub fn registry(file: &ConfigFile, lookup: &dyn Fn(&str) -> Option<String>) -> ProviderRegistry {
    let mut configs: Vec<ProviderConfig> = file.providers.clone();
    let convenience = [
        (
            "openai",
            ProviderKind::Openai,
            "OPENAI_API_KEY",
            "gpt-4o-mini",
        ),
        (
            "anthropic",
            ProviderKind::Anthropic,
            "ANTHROPIC_API_KEY",
            "claude-sonnet-4-5",
        ),
    ];
    for (id, kind, variable, model) in convenience {
        if !configs.iter().any(|config| config.id == id)
            && lookup(variable).is_some_and(|key| !key.trim().is_empty())
        {
            configs.push(ProviderConfig {
                id: id.to_owned(),
                kind,
                label: None,
                base_url: None,
                api_key_env: Some(variable.to_owned()),
                models: vec![model.to_owned()],
                timeout_seconds: None,
                deadline_seconds: None,
                tools: None,
                // Prices change; only the operator's configuration says them.
                prices: std::collections::BTreeMap::new(),
            });
        }
    }
    let mut built: Vec<(ProviderInfo, Arc<dyn Provider>)> = Vec::new();
    for config in &configs {
        if config.id == sim::PROVIDER_ID {
            tracing::warn!(
                "provider id \"sim\" is the built-in simulator; the configured one is ignored"
            );
            continue;
        }
        match build_one(config, lookup) {
            Ok(provider) => built.push(provider),
            Err(reason) => {
                tracing::warn!(provider = %config.id, "provider not available: {reason}")
            }
        }
    }
    let latency = sim_latency_ms(file);
    let simulator: (ProviderInfo, Arc<dyn Provider>) = (
        sim_info(),
        Arc::new(SimProvider {
            latency_per_token: Duration::from_millis(latency),
            ..SimProvider::default()
        }),
    );
    // The first provider added is the default.
    let default = file.default_provider.as_deref().unwrap_or(sim::PROVIDER_ID);
    let mut ordered = vec![simulator];
    ordered.extend(built);
    if let Some(position) = ordered.iter().position(|(info, _)| info.id == default) {
        let chosen = ordered.remove(position);
        ordered.insert(0, chosen);
    } else {
        tracing::warn!(provider = %default, "default_provider is not available; the simulator is the default");
    }
    let mut registry = ProviderRegistry::new();
    for (info, provider) in ordered {
        registry.add(info, provider);
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulator_is_always_there_and_the_default() {
        let registry = registry(&ConfigFile::default(), &|_| None);
        assert_eq!(registry.ids(), ["sim"]);
        let (info, _) = registry.get("").unwrap();
        assert_eq!(info.label, "Simulated");
        assert!(info.simulated);
    }

    #[test]
    fn providers_without_their_key_are_left_out() {
        let file = ConfigFile::parse(
            "[[providers]]\nid = \"openai\"\nkind = \"openai\"\napi_key_env = \"MY_KEY\"\nmodels = [\"gpt-4o-mini\"]\n",
        )
        .unwrap();
        assert_eq!(registry(&file, &|_| None).ids(), ["sim"]);
        let registry = registry(&file, &|variable| {
            (variable == "MY_KEY").then(|| "sk-test".to_owned())
        });
        assert_eq!(registry.ids(), ["openai", "sim"]);
        let infos = serde_json::to_string(&registry.infos()).unwrap();
        assert!(
            !infos.contains("sk-test"),
            "a key leaked into the provider list"
        );
    }

    #[test]
    fn the_usual_key_variables_add_their_provider() {
        let registry = registry(&ConfigFile::default(), &|variable| {
            (variable == "ANTHROPIC_API_KEY").then(|| "key".to_owned())
        });
        assert_eq!(registry.ids(), ["anthropic", "sim"]);
        assert_eq!(registry.get("").unwrap().0.id, "sim");
    }
}
