//! The identity a run keeps: its requester's principal and the identity values the agent
//! keeps ([`KeptTypes`]), written with the run so that a resume by someone else goes on as
//! the requester's run ([`Requester`]).

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Principal;

/// Who a run is for: its requester's principal and the identity values kept with it, by
/// key. Part of the run's data, so checkpoints keep it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Requester {
    pub(crate) principal: Principal,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub(crate) values: Map<String, Value>,
}

/// The identity types an agent keeps with its runs, each under a key: how to write one
/// from a run's extensions, and put it back. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct KeptTypes(Arc<[Kept]>);

/// One kept type.
#[derive(Clone)]
struct Kept {
    key: Arc<str>,
    save: fn(&http::Extensions) -> Option<Value>,
    restore: fn(&mut http::Extensions, Option<&Value>),
}

impl KeptTypes {
    /// These types and `T`, under `key`.
    pub(crate) fn with<T>(&self, key: impl Into<Arc<str>>) -> Self
    where
        T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static,
    {
        let kept = Kept {
            key: key.into(),
            save: save::<T>,
            restore: restore::<T>,
        };
        let mut all: Vec<Kept> = self
            .0
            .iter()
            .filter(|k| k.key != kept.key)
            .cloned()
            .collect();
        all.push(kept);
        KeptTypes(all.into())
    }

    /// The run's requester: `principal`, and the kept values among `extensions`.
    /// `None` for an anonymous run with none: it keeps nothing.
    pub(crate) fn requester(
        &self,
        principal: &Principal,
        extensions: &http::Extensions,
    ) -> Option<Requester> {
        let values: Map<String, Value> = (self.0.iter())
            .filter_map(|kept| Some((kept.key.to_string(), (kept.save)(extensions)?)))
            .collect();
        if principal.is_anonymous() && values.is_empty() {
            return None;
        }
        Some(Requester {
            principal: principal.clone(),
            values,
        })
    }

    /// Puts the requester's kept values in place of the caller's in `extensions`: a kept
    /// type the requester had no value of is removed.
    pub(crate) fn restore(&self, requester: Option<&Requester>, extensions: &mut http::Extensions) {
        for kept in self.0.iter() {
            let value = requester.and_then(|r| r.values.get(&*kept.key));
            (kept.restore)(extensions, value);
        }
    }
}

fn save<T: Serialize + Send + Sync + 'static>(extensions: &http::Extensions) -> Option<Value> {
    serde_json::to_value(extensions.get::<T>()?).ok()
}

fn restore<T>(extensions: &mut http::Extensions, value: Option<&Value>)
where
    T: DeserializeOwned + Clone + Send + Sync + 'static,
{
    extensions.remove::<T>();
    if let Some(value) = value.and_then(|v| T::deserialize(v).ok()) {
        extensions.insert(value);
    }
}

impl fmt::Debug for KeptTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|k| &*k.key))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    enum Role {
        Clerk,
        Manager,
    }

    #[test]
    fn a_requesters_kept_values_take_the_place_of_the_callers() {
        let kept = KeptTypes::default().with::<Role>("role");
        let mut clerk = http::Extensions::new();
        clerk.insert(Role::Clerk);
        let requester = kept.requester(&Principal::new("carol"), &clerk);
        let written = serde_json::to_string(&requester).unwrap_or_default();
        assert_eq!(
            written,
            r#"{"principal":"carol","values":{"role":"Clerk"}}"#
        );

        let mut manager = http::Extensions::new();
        manager.insert(Role::Manager);
        kept.restore(requester.as_ref(), &mut manager);
        assert_eq!(manager.get::<Role>(), Some(&Role::Clerk));

        // A requester without a role leaves none, whatever the caller has.
        let nobody = kept.requester(&Principal::new("dan"), &http::Extensions::new());
        kept.restore(nobody.as_ref(), &mut manager);
        assert_eq!(manager.get::<Role>(), None);
        assert!(
            kept.requester(&Principal::anonymous(), &http::Extensions::new())
                .is_none()
        );
    }
}
