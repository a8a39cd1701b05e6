//! What a client is (its class) and what a robot does (its category): the words of both.

use serde::Deserialize;

use crate::keyword::keyword_enum;

keyword_enum! {
    /// What kind of client sent a request: a person's `browser` or in-app web view (never enforced
    /// by default), a `robot` (crawler, tool or script: bound by robots.txt), or `unknown` (looks
    /// like nothing known: a mobile app, an API client, ...).
    pub enum Class("class") { Browser = "browser", Robot = "robot", Unknown = "unknown" }
}

keyword_enum! {
    /// What an agent does, as written in the catalog: search-engine indexing; collecting data to
    /// train AI models; indexing for AI-powered search; fetching for a user of an AI assistant or
    /// agent; SEO and marketing tools; uptime and performance monitoring; web archives; feed
    /// readers; link previews of social networks and chat apps; HTTP libraries and command-line
    /// tools; security scanners; anything else (advertising, research, automation, ...); and, never
    /// in the catalog, a robot whose browser User-Agent its fingerprints contradict.
    #[derive(Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Category("category") {
        Search = "search", AiTraining = "ai-training", AiSearch = "ai-search",
        AiAssistant = "ai-assistant", Seo = "seo", Monitoring = "monitoring", Archiver = "archiver",
        FeedReader = "feed-reader", SocialPreview = "social-preview", HttpLibrary = "http-library",
        Scanner = "scanner", Other = "other", Disguised = "disguised",
    }
}

impl Category {
    /// The categories of AI robots: what `[license]` and `[pay_per_crawl]` ask by default.
    pub const AI: [Category; 3] = [
        Category::AiTraining,
        Category::AiSearch,
        Category::AiAssistant,
    ];
}
