//! User-Agent → class (browser | robot | unknown), agent, category and robots.txt token chain.
//!
//! Pure: no I/O on the request path. [`Classifier::build`] compiles the [`Catalog`] once into
//! automata (aho-corasick over whole tokens, a regex set as a second tier);
//! [`Classifier::classify_uncached`] then runs without allocating, and [`Classifier::classify`]
//! remembers the answers for the most recent distinct User-Agents (real traffic repeats a few
//! hundred strings). The order follows robots-spec §7:
//!
//! 1. empty User-Agent → robot;
//! 2. catalog match → robot (with the agent); never a match inside the device item of a
//!    comment (`Android 10; Nitro 5 Build/...`): a device model name is not a robot;
//! 3. strong robot markers (`bot`/`crawl`/`spider` in a product name, a `+http` contact URL, an
//!    e-mail address) → robot;
//! 4. a browser-automation driver or page-test harness named anywhere (`HeadlessChrome`,
//!    `Selenium`, `PhantomJS`, `Chrome-Lighthouse`, `PTST`, `PingdomTMS`) → robot
//!    ([`Shape::Automation`]), even inside an app shell;
//! 5. a service in a browser-shaped string: a tool word (checker, monitor, inspector, preview,
//!    agent, ...) in a top-level product, a versioned product of a comment, or a comment after
//!    the platform's (`Safari/537.36 (Dotcom-Monitor)`), or a URL or site name outside the
//!    platform comment (`Firefox/103.0 abuse.xmco.fr`) → robot ([`Shape::ServiceProduct`]),
//!    unless the string has an app-shell or in-app-browser shape ([`APP_SHELLS`]); otherwise a
//!    browser signature (a real engine with a version) → browser;
//! 6. an HTTP-library product name (`okhttp`, `Go-http-client`) → robot;
//! 7. weak markers (the same words inside a device comment, bare URLs, site names, tool words)
//!    → robot, unless the string names a device or an app a person runs (a phone maker, a TV,
//!    a media player, a mail client: `PHILIPS-Az@lis288 UP/4.1`) outside a `compatible`
//!    comment, which makes it unknown; the same for an HTTP-library word that is not the first
//!    product (`Nokia SyncML HTTP Client`);
//! 8. a structural rule ([`Shape`]: an injection payload, a lone `Product/version`, products or
//!    free text naming no platform, `Mozilla/x` with no engine) → robot;
//! 9. otherwise unknown: what names a platform, a device or a desktop OS without an engine
//!    (an app: `Dalvik/2.1.0 (Linux; U; Android 11)` is Android's default HTTP stack, sent by
//!    apps a person uses, so it stays unknown, as `CFNetwork`/`Darwin` apps on iOS do).
//!
//! Step 3 before step 5 keeps Googlebot-smartphone (a full Chrome string plus `Googlebot/2.1`) a
//! robot; step 5 before step 6 keeps a Cubot phone (`Android 9; CUBOT X19`) a browser.

mod browser;
mod browsers;
mod catalog;
pub mod disguise;
mod error;
mod kind;
mod known;
mod markers;
mod shape;
mod table;

use std::collections::HashMap;
use std::fmt;

pub use browsers::{BrowserList, BROWSERS_FILE, BROWSERS_TEXT};
pub use catalog::{Agent, Catalog, BUILTIN_FILE, BUILTIN_TEXT};
pub use error::CatalogError;
pub use kind::{Category, Class};
pub use shape::{Shape, APP_SHELLS, ELECTRON_APPS};

use known::KnownAgents;
use markers::Strength;
use shape::Shapes;

/// Why a User-Agent got its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A catalog entry matched.
    Catalog,
    /// Robot markers: bot/crawl/spider words, a contact URL, an e-mail address, ...
    Marker,
    /// An HTTP library or command-line tool (from the catalog or by its product name).
    HttpTool,
    /// The User-Agent was empty or missing.
    Empty,
    /// A browser engine signature.
    Browser,
    /// A structural rule: no browser, app or device could send this shape.
    Shape(Shape),
    /// Nothing recognisable.
    Nothing,
}

impl Reason {
    /// `"catalog"`, `"marker"`, `"http-tool"`, `"empty"`, `"browser"`, `"nothing"` or the
    /// structural rule's name (`"lone-product"`, see [`Shape::as_str`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Shape(shape) => shape.as_str(),
            Reason::Catalog => "catalog",
            Reason::Marker => "marker",
            Reason::HttpTool => "http-tool",
            Reason::Empty => "empty",
            Reason::Browser => "browser",
            Reason::Nothing => "nothing",
        }
    }
}

impl Reason {
    /// One sentence saying what decided, for `robogate classify --explain`.
    pub fn explain(self) -> &'static str {
        match self {
            Reason::Catalog => "a catalog entry matched a whole token",
            Reason::Marker => {
                "a robot marker: bot/crawl/spider in a product, a contact URL or e-mail, a tool word"
            }
            Reason::HttpTool => "an HTTP library or command-line tool named as the product",
            Reason::Empty => "the User-Agent is empty",
            Reason::Browser => "a browser engine signature with a version",
            Reason::Shape(shape) => shape.explain(),
            Reason::Nothing => "no engine, no marker, but a platform or device: an app or device",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The answer for one User-Agent; borrows the agent from the [`Classifier`].
#[derive(Clone, Copy, Debug)]
pub struct Classification<'c> {
    /// Browser, robot or unknown.
    pub class: Class,
    /// The catalog agent, if one matched.
    pub agent: Option<&'c Agent>,
    /// Its position in [`Classifier::agents`] (a compact, stable handle for the request).
    pub agent_index: Option<usize>,
    /// Why.
    pub reason: Reason,
}

impl<'c> Classification<'c> {
    fn new(class: Class, agent: Option<&'c Agent>, reason: Reason) -> Classification<'c> {
        Classification {
            class,
            agent,
            agent_index: None,
            reason,
        }
    }

    /// The agent's robots.txt token chain; empty when no catalog agent matched.
    pub fn tokens(&self) -> &'c [String] {
        self.agent.map_or(&[], |agent| agent.tokens.as_slice())
    }

    /// The agent's category if one matched, else the category a structural rule implies.
    pub fn category(&self) -> Option<Category> {
        match (self.agent, self.reason) {
            (Some(agent), _) => Some(agent.category),
            (None, Reason::Shape(shape)) => Some(shape.category()),
            (None, _) => None,
        }
    }
}

/// How many distinct User-Agents [`Classifier::classify`] remembers.
pub const CACHE_ENTRIES: usize = 4096;

/// Longer User-Agents are classified afresh every time, which bounds the cache's memory
/// (about 2 MiB at most) whatever clients send.
pub const CACHE_MAX_LEN: usize = 512;

/// A remembered answer: the agent by index, so the cache holds no borrows.
#[derive(Clone, Copy)]
struct Remembered {
    class: Class,
    agent_index: Option<usize>,
    reason: Reason,
}

/// A compiled classifier (`Send + Sync`); build once, share everywhere. Its only mutable part is
/// the cache of recent answers, which never changes what an answer is.
pub struct Classifier {
    agents: Vec<Agent>,
    by_name: HashMap<String, usize>,
    known: KnownAgents,
    shapes: Shapes,
    browsers: BrowserList,
    cache: quick_cache::sync::Cache<Box<str>, Remembered>,
}

impl fmt::Debug for Classifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Classifier")
            .field("agents", &self.agents.len())
            .field("cached", &self.cache.len())
            .finish_non_exhaustive()
    }
}

impl Classifier {
    /// Compiles the catalog into automata. Fails only on a catalog that [`Catalog::parse`] would
    /// reject or on automata too large to build; errors carry the entry's file and line.
    pub fn build(catalog: Catalog) -> Result<Classifier, Vec<CatalogError>> {
        let file = catalog.file().to_owned();
        let (agents, browsers) = catalog.into_parts();
        let known = KnownAgents::build(&agents, &file)?;
        Ok(Classifier::assemble(agents, browsers, known))
    }

    /// The classifier over the shipped catalog.
    pub fn builtin() -> Classifier {
        let (agents, browsers) = Catalog::builtin().into_parts();
        let known =
            KnownAgents::build(&agents, BUILTIN_FILE).unwrap_or_else(|_| KnownAgents::empty());
        Classifier::assemble(agents, browsers, known)
    }

    fn assemble(agents: Vec<Agent>, browsers: BrowserList, known: KnownAgents) -> Classifier {
        let by_name = agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.name.to_ascii_lowercase(), i))
            .collect();
        Classifier {
            agents,
            by_name,
            known,
            shapes: Shapes::build(),
            browsers,
            cache: quick_cache::sync::Cache::new(CACHE_ENTRIES),
        }
    }

    /// Classifies one User-Agent header value (pass `""` when the header is missing); the same
    /// answer as [`Classifier::classify_uncached`], from the cache when the string was seen
    /// recently.
    pub fn classify(&self, user_agent: &str) -> Classification<'_> {
        if user_agent.len() > CACHE_MAX_LEN {
            return self.classify_uncached(user_agent);
        }
        if let Some(r) = self.cache.get(user_agent) {
            return Classification {
                class: r.class,
                agent: r.agent_index.and_then(|i| self.agents.get(i)),
                agent_index: r.agent_index,
                reason: r.reason,
            };
        }
        let c = self.classify_uncached(user_agent);
        let remembered = Remembered {
            class: c.class,
            agent_index: c.agent_index,
            reason: c.reason,
        };
        self.cache.insert(user_agent.into(), remembered);
        c
    }

    /// Classifies one User-Agent header value by running the automata.
    pub fn classify_uncached(&self, user_agent: &str) -> Classification<'_> {
        let ua = user_agent.trim_ascii();
        if ua.is_empty() {
            return Classification::new(Class::Robot, None, Reason::Empty);
        }
        let scan = self.known.scan(ua);
        if scan.suspect && self.shapes.holds_injection(ua) {
            return Classification::new(Class::Robot, None, Reason::Shape(Shape::Injection));
        }
        // An app the browser list knows, in a browser-shaped string (`... Mobile/15E148
        // Bluesky/1.92`), is that app's in-app browser, not the catalog's fetcher of that name.
        let in_app = scan.browser
            && scan
                .agent_span
                .is_some_and(|(start, end)| self.browsers.knows(&ua[start..end]));
        let agent = scan.agent.filter(|_| !in_app);
        if let Some((index, agent)) = agent.and_then(|i| Some((i, self.agents.get(i)?))) {
            let reason = if agent.category == Category::HttpLibrary {
                Reason::HttpTool
            } else {
                Reason::Catalog
            };
            return Classification {
                agent_index: Some(index),
                ..Classification::new(Class::Robot, Some(agent), reason)
            };
        }
        match (scan.markers, scan.browser) {
            (Strength::Strong, _) => Classification::new(Class::Robot, None, Reason::Marker),
            (Strength::Automation, _) => {
                Classification::new(Class::Robot, None, Reason::Shape(Shape::Automation))
            }
            (Strength::ToolProduct, true) if !shape::is_app_shell(ua) => {
                Classification::new(Class::Robot, None, Reason::Shape(Shape::ServiceProduct))
            }
            // A current engine string is a browser only if the browser list knows every
            // product in it; any other product is a service in a browser's clothing.
            (_, true) => match self.browsers.foreign_product(ua, scan.engines) {
                Some(product) => Classification::new(
                    Class::Robot,
                    None,
                    Reason::Shape(Shape::ForeignProduct(browsers::category_of(product))),
                ),
                None => Classification::new(Class::Browser, None, Reason::Browser),
            },
            (Strength::Weak | Strength::ToolProduct, false)
                if self.shapes.names_device_or_app(ua) =>
            {
                Classification::new(Class::Unknown, None, Reason::Nothing)
            }
            // The library named first is the client (`okhttp/4.9 (Linux; Android 11)`); named
            // after a device, it is the device's own stack (`Nokia SyncML HTTP Client`).
            (Strength::HttpTool, false)
                if !first_word_names_http(ua) && self.shapes.names_device_or_app(ua) =>
            {
                Classification::new(Class::Unknown, None, Reason::Nothing)
            }
            (Strength::HttpTool, false) => {
                Classification::new(Class::Robot, None, Reason::HttpTool)
            }
            (Strength::Weak | Strength::ToolProduct, false) => {
                Classification::new(Class::Robot, None, Reason::Marker)
            }
            (Strength::None, false) => match self.shapes.judge(ua) {
                Some(shape) => Classification::new(Class::Robot, None, Reason::Shape(shape)),
                None => Classification::new(Class::Unknown, None, Reason::Nothing),
            },
        }
    }

    /// All catalog agents, in file order.
    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }

    /// The browser list it judges browser-shaped strings by.
    pub fn browsers(&self) -> &BrowserList {
        &self.browsers
    }

    /// For `robogate classify --explain`: the text that decided, if the rule found one: the
    /// product that made a browser-shaped string a robot ([`Shape::ForeignProduct`]), or the
    /// item holding the robot marker or service's tool word ([`Reason::Marker`],
    /// [`Shape::ServiceProduct`]), or the catalog token that matched (none for a regex entry).
    pub fn deciding_text<'u>(&self, user_agent: &'u str) -> Option<&'u str> {
        let ua = user_agent.trim_ascii();
        let scan = self.known.scan(ua);
        match self.classify_uncached(ua).reason {
            Reason::Shape(Shape::ForeignProduct(_)) => {
                self.browsers.foreign_product(ua, scan.engines)
            }
            Reason::Catalog | Reason::HttpTool if scan.agent.is_some() => {
                scan.agent_span.and_then(|(start, end)| ua.get(start..end))
            }
            Reason::Marker | Reason::Shape(Shape::ServiceProduct) => {
                scan.marker.and_then(|(start, end)| ua.get(start..end))
            }
            _ => None,
        }
    }

    /// The agent with this catalog name (case-insensitive).
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        let index = self.by_name.get(&name.to_ascii_lowercase())?;
        self.agents.get(*index)
    }
}

/// The first word of `ua` holds `http` (`okhttp/4.9`, `Go-http-client/2.0`).
fn first_word_names_http(ua: &str) -> bool {
    let first = ua.split_ascii_whitespace().next().unwrap_or("");
    first
        .as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"http"))
}

#[cfg(test)]
mod tests;
