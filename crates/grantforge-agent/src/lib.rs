//! The GrantForge agent runtime for Kafka: configuration, policy sources, the agents shared by a
//! JVM's authorizers, and the log queue the JVM drains.
//!
//! It knows the Kafka mapping (`grantforge-kafka`) and the engine, and nothing of JNI: the JNI crate
//! decodes what the Java shim sends and calls [`registry::open`] and [`Agent`].

pub mod agent;
pub mod audit;
pub mod cache;
pub mod client;
mod clock;
pub mod config;
mod decisions;
pub mod events;
pub mod explain;
mod keys;
mod lane;
pub mod logging;
pub mod metrics;
pub mod quotas;
pub mod registry;
pub mod rules;
mod server;
pub mod settings;
mod shipper;
mod source;
mod spin;
mod sync;
pub mod trust;
#[cfg(test)]
mod test_support;

pub use agent::Agent;
pub use config::{AgentConfig, ConfigError, PolicySource};
