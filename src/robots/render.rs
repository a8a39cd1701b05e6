//! Deterministic robots.txt text of the compiled rules (RFC 9309 reading).
//!
//! One group per agent key (named keys sorted, `*` last), patterns in canonical form (§4), so
//! the output has no raw spaces, no non-ASCII and one path per line: both readings of the
//! rendered file agree, and parsing it again gives the same decisions. Rules added by Google's
//! index rule are not written (parsing derives them again); a group without rules gets an
//! empty `Disallow:` so that it does not merge with the next one.

use std::fmt::Write;

use super::table::{Group, Table};

/// Renders an RFC 9309 table and the file's `Sitemap` values as robots.txt text (see
/// [`super::Robots::render`]).
pub(super) fn render_table(table: &Table, sitemaps: &[String]) -> String {
    let (star, named): (Vec<&Group>, Vec<&Group>) =
        table.groups.iter().partition(|group| &*group.key == "*");
    let mut out = String::from("# robots.txt rendered by robogate (RFC 9309 reading)\n");
    for group in named.into_iter().chain(star) {
        out.push('\n');
        render_group(table, group, &mut out);
    }
    if !sitemaps.is_empty() {
        out.push('\n');
    }
    for sitemap in sitemaps {
        let _ = writeln!(out, "Sitemap: {sitemap}");
    }
    out
}

fn render_group(table: &Table, group: &Group, out: &mut String) {
    let _ = writeln!(out, "User-agent: {}", group.key);
    if let Some((seconds, _)) = group.crawl_delay {
        let _ = writeln!(out, "Crawl-delay: {seconds}");
    }
    let mut written = 0;
    for rule in table.rules(group).iter().filter(|rule| !rule.derived) {
        let field = if rule.allow { "Allow" } else { "Disallow" };
        let _ = writeln!(out, "{field}: {}", rule.pattern.canonical().to_written());
        written += 1;
    }
    if written == 0 {
        out.push_str("Disallow:\n");
    }
}

#[cfg(test)]
mod tests {
    use super::super::{render, Robots};

    #[test]
    fn renders_groups_sorted_with_star_last() {
        let robots = Robots::parse(
            b"User-agent: *\nDisallow: /a b\nUser-agent: Zed\nUser-agent: able\nAllow: /x/index.html\nCrawl-delay: 2\nSitemap: http://e/s.xml\nUser-agent: empty\n",
        );
        let want = "# robots.txt rendered by robogate (RFC 9309 reading)\n\
            \nUser-agent: able\nCrawl-delay: 2\nAllow: /x/index.html\n\
            \nUser-agent: empty\nDisallow:\n\
            \nUser-agent: zed\nCrawl-delay: 2\nAllow: /x/index.html\n\
            \nUser-agent: *\nDisallow: /a%20b\n\
            \nSitemap: http://e/s.xml\n";
        assert_eq!(render(&robots), want);
    }

    #[test]
    fn rendered_file_has_one_reading() {
        let robots = Robots::parse(b"User-agent: a b\n\nUser-agent: c\nDisallow: /x /y\n");
        assert!(robots.readings_differ());
        assert!(!Robots::parse(render(&robots).as_bytes()).readings_differ());
    }
}
