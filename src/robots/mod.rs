//! TEMPORARY STUB — replaced by the real engine (issue 3). Naive prefix matching only.
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reading {
    Enforce,
    Rfc9309,
    Classic1994,
}
impl FromStr for Reading {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "enforce" => Ok(Self::Enforce),
            "rfc9309" => Ok(Self::Rfc9309),
            "1994" => Ok(Self::Classic1994),
            _ => Err(format!("unknown reading {s:?}")),
        }
    }
}
impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Enforce => "enforce",
            Self::Rfc9309 => "rfc9309",
            Self::Classic1994 => "1994",
        })
    }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Allow,
    Disallow,
}
impl Verdict {
    pub fn is_disallowed(self) -> bool {
        self == Self::Disallow
    }
}
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_disallowed() {
            "disallow"
        } else {
            "allow"
        })
    }
}
struct Group {
    agents: Vec<String>,
    rules: Vec<(bool, String, u32)>,
    delay: Option<(f64, u32)>,
}
pub struct Robots {
    groups: Vec<Group>,
    sitemaps: Vec<String>,
}
pub struct Decision<'r> {
    pub verdict: Verdict,
    pub reading: Reading,
    pub group: Option<&'r str>,
    pub rule: Option<RuleRef<'r>>,
}
pub struct RuleRef<'r> {
    pub allow: bool,
    pub pattern: &'r str,
    pub line: u32,
}
impl Robots {
    pub fn parse(bytes: &[u8]) -> Robots {
        let text = String::from_utf8_lossy(bytes);
        let mut groups: Vec<Group> = Vec::new();
        let mut sitemaps = Vec::new();
        let mut in_agents = false;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            match k.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push(Group {
                            agents: vec![],
                            rules: vec![],
                            delay: None,
                        });
                        in_agents = true;
                    }
                    let key: String = if v.starts_with('*') {
                        "*".into()
                    } else {
                        v.chars()
                            .take_while(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '_')
                            .collect::<String>()
                            .to_ascii_lowercase()
                    };
                    if let Some(g) = groups.last_mut() {
                        g.agents.push(key)
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut() {
                        g.rules.push((k == "allow", v, i as u32 + 1))
                    }
                }
                "crawl-delay" => {
                    if let (Some(g), Ok(d)) = (groups.last_mut(), v.parse()) {
                        g.delay = Some((d, i as u32 + 1))
                    }
                }
                "sitemap" => sitemaps.push(v),
                _ => {}
            }
        }
        Robots { groups, sitemaps }
    }
    fn groups_for<S: AsRef<str>>(
        &self,
        tokens: &[S],
        ignore_star: bool,
    ) -> (Option<&str>, Vec<&Group>) {
        for t in tokens {
            let t = t.as_ref().to_ascii_lowercase();
            let gs: Vec<&Group> = self
                .groups
                .iter()
                .filter(|g| g.agents.contains(&t))
                .collect();
            if let Some(g) = gs.first() {
                let key = g.agents.iter().find(|a| **a == t).map(|s| s.as_str());
                return (key, gs);
            }
        }
        if ignore_star {
            return (None, vec![]);
        }
        let gs: Vec<&Group> = self
            .groups
            .iter()
            .filter(|g| g.agents.iter().any(|a| a == "*"))
            .collect();
        (if gs.is_empty() { None } else { Some("*") }, gs)
    }
    pub fn decide<S: AsRef<str>>(
        &self,
        tokens: &[S],
        ignore_star: bool,
        path: &str,
        reading: Reading,
    ) -> Decision<'_> {
        let path = canonicalize_request(path);
        let (group, gs) = self.groups_for(tokens, ignore_star);
        let mut best: Option<&(bool, String, u32)> = None;
        if path != "/robots.txt" {
            for r in gs.iter().flat_map(|g| g.rules.iter()) {
                if !r.1.is_empty() && path.starts_with(r.1.as_str()) {
                    let better = match best {
                        None => true,
                        Some(b) => r.1.len() > b.1.len() || (r.1.len() == b.1.len() && r.0),
                    };
                    if better {
                        best = Some(r)
                    }
                }
            }
        }
        Decision {
            verdict: if best.is_some_and(|b| !b.0) {
                Verdict::Disallow
            } else {
                Verdict::Allow
            },
            reading,
            group,
            rule: best.map(|b| RuleRef {
                allow: b.0,
                pattern: &b.1,
                line: b.2,
            }),
        }
    }
    pub fn group_from_header<'u>(&self, user_agent: &'u str) -> Option<&'u str> {
        user_agent
            .split(|c: char| !(c.is_ascii_alphabetic() || c == '-' || c == '_'))
            .filter(|w| !w.is_empty() && self.has_group(w))
            .max_by_key(|w| w.len())
    }
    pub fn has_group(&self, token: &str) -> bool {
        let t = token.to_ascii_lowercase();
        self.groups.iter().any(|g| g.agents.contains(&t))
    }
    pub fn crawl_delay<S: AsRef<str>>(
        &self,
        tokens: &[S],
        ignore_star: bool,
    ) -> Option<(f64, u32)> {
        self.groups_for(tokens, ignore_star)
            .1
            .iter()
            .find_map(|g| g.delay)
    }
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }
    pub fn readings_differ(&self) -> bool {
        false
    }
}
pub fn canonicalize_request(target: &str) -> Cow<'_, str> {
    let t = target.find("://").map_or(target, |i| {
        target[i + 3..]
            .find('/')
            .map_or("/", |j| &target[i + 3 + j..])
    });
    Cow::Borrowed(t)
}
pub struct LintWarning {
    pub line: Option<u32>,
    pub message: String,
    pub fix: String,
}
impl fmt::Display for LintWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {} — fix: {}", self.message, self.fix),
            None => write!(f, "{} — fix: {}", self.message, self.fix),
        }
    }
}
pub fn lint(_bytes: &[u8]) -> Vec<LintWarning> {
    Vec::new()
}
