//! TEMPORARY STUB — replaced by the real classifier (issue 4).
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Browser,
    Robot,
    Unknown,
}
impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Browser => "browser",
            Self::Robot => "robot",
            Self::Unknown => "unknown",
        }
    }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    Search,
    AiTraining,
    HttpLibrary,
    Other,
}
impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Search => "search",
            Self::AiTraining => "ai-training",
            Self::HttpLibrary => "http-library",
            Self::Other => "other",
        }
    }
}
impl std::str::FromStr for Category {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "search" => Ok(Self::Search),
            "ai-training" => Ok(Self::AiTraining),
            "http-library" => Ok(Self::HttpLibrary),
            "other" => Ok(Self::Other),
            _ => Err(format!("unknown category {s:?}")),
        }
    }
}
pub struct Agent {
    pub name: String,
    pub category: Category,
    pub operator: String,
    pub tokens: Vec<String>,
    pub ignores_star: bool,
}
pub struct Catalog {
    agents: Vec<Agent>,
}
pub struct CatalogError {
    pub file: String,
    pub line: u32,
    pub key: String,
    pub message: String,
}
impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.key, self.message
        )
    }
}
fn agent(name: &str, category: Category, tokens: &[&str]) -> Agent {
    Agent {
        name: name.into(),
        category,
        operator: String::new(),
        tokens: tokens.iter().map(|s| s.to_string()).collect(),
        ignores_star: false,
    }
}
impl Catalog {
    pub fn builtin() -> Catalog {
        Catalog {
            agents: vec![
                agent("Googlebot", Category::Search, &["googlebot"]),
                agent("GPTBot", Category::AiTraining, &["gptbot"]),
                agent("CCBot", Category::AiTraining, &["ccbot"]),
                agent("Wget", Category::HttpLibrary, &["wget"]),
                agent("curl", Category::HttpLibrary, &["curl"]),
                agent("python-urllib", Category::HttpLibrary, &["python-urllib"]),
            ],
        }
    }
    pub fn parse(_text: &str, _file: &str) -> Result<Catalog, Vec<CatalogError>> {
        Ok(Self::builtin())
    }
    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }
}
pub struct Classifier {
    catalog: Catalog,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Catalog,
    Marker,
    HttpTool,
    Empty,
    Browser,
    Nothing,
}
#[derive(Clone, Copy)]
pub struct Classification<'c> {
    pub class: Class,
    pub agent: Option<&'c Agent>,
    pub reason: Reason,
}
impl Classifier {
    pub fn build(catalog: Catalog) -> Result<Classifier, Vec<CatalogError>> {
        Ok(Classifier { catalog })
    }
    pub fn agents(&self) -> &[Agent] {
        self.catalog.agents()
    }
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents()
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
    }
    pub fn classify(&self, ua: &str) -> Classification<'_> {
        let lower = ua.to_ascii_lowercase();
        if ua.trim().is_empty() {
            return Classification {
                class: Class::Robot,
                agent: None,
                reason: Reason::Empty,
            };
        }
        if let Some(a) = self.agents().iter().find(|a| lower.contains(&a.tokens[0])) {
            return Classification {
                class: Class::Robot,
                agent: Some(a),
                reason: Reason::Catalog,
            };
        }
        if lower.contains("bot") || lower.contains("crawl") || lower.contains("spider") {
            return Classification {
                class: Class::Robot,
                agent: None,
                reason: Reason::Marker,
            };
        }
        if lower.starts_with("mozilla/") {
            return Classification {
                class: Class::Browser,
                agent: None,
                reason: Reason::Browser,
            };
        }
        Classification {
            class: Class::Unknown,
            agent: None,
            reason: Reason::Nothing,
        }
    }
}
