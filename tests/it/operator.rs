//! What a new operator tripped on in a real deployment (issue 42): each defect reproduced as
//! the operator met it, through the real binary.

use crate::support::*;

fn json(rg: &Robogate, path: &str) -> serde_json::Value {
    serde_json::from_str(&get(rg.admin, path, None).unwrap().text()).unwrap()
}

/// A catalog robot whose name has spaces is shown by that name, with its category, in
/// `/compliance` and the status page (it was `Tiny?Tiny?RSS`, category null).
#[test]
fn robot_names_with_spaces_are_shown_as_written() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let ua = "Tiny Tiny RSS/1.11 (http://tt-rss.org/)";
    assert_eq!(get(rg.addr, "/blog/", Some(ua)).unwrap().status, 200);
    let compliance = eventually("the request counted", || {
        let view = json(&rg, "/compliance");
        view["robots"]
            .get("Tiny Tiny RSS")
            .is_some()
            .then_some(view)
    });
    assert_eq!(compliance["robots"]["Tiny Tiny RSS"]["requests"], 1);
    let status = json(&rg, "/status.json");
    let top = status["top_robots"].as_array().unwrap();
    let row = top.iter().find(|r| r["agent"] == "Tiny Tiny RSS");
    assert_eq!(
        row.map(|r| &r["category"]),
        Some(&"feed-reader".into()),
        "{status:#}"
    );
}

/// In shadow mode, what robogate would have refused is shown per robot (`would_refuse`, by
/// reason, beside `refused`), where an operator evaluating it looks: `/compliance` and the
/// status page's top robots.
#[test]
fn shadow_mode_shows_what_it_would_refuse_per_robot() {
    let origin = Origin::start();
    let rg = Robogate::start(
        origin.addr,
        DEFAULT_ROBOTS,
        "[enforce]\nmode = \"shadow\"\n",
    );
    for _ in 0..3 {
        let answer = get(
            rg.addr,
            "/private/x",
            Some("Mozilla/5.0 (compatible; GPTBot/1.2)"),
        );
        // Served: the demo origin's own answer (it has no such page).
        assert_eq!(answer.unwrap().status, 404);
    }
    let view = eventually("three would-be refusals", || {
        let view = json(&rg, "/compliance");
        (view["robots"]["GPTBot"]["would_refuse"]["disallow"] == 3).then_some(view)
    });
    assert_eq!(view["robots"]["GPTBot"]["refused"], serde_json::json!({}));
    let status = json(&rg, "/status.json");
    let top = status["top_robots"].as_array().unwrap();
    let gptbot = top.iter().find(|r| r["agent"] == "GPTBot").unwrap();
    assert_eq!(gptbot["would_refuse"], 3, "{status:#}");
}

/// `/robots.txt` fetches by clients with a browser's User-Agent are counted (a crawler in
/// browser clothing reads it; people rarely do), in a row of their own. (A client that read it
/// as a program does is a robot for a while after: its next fetch is a disguised robot's row.)
#[test]
fn browser_user_agents_robots_txt_fetches_are_counted() {
    let origin = Origin::start();
    let rg = Robogate::start(origin.addr, DEFAULT_ROBOTS, "");
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    let answer = get(rg.addr, "/robots.txt", Some(firefox)).unwrap();
    assert_eq!(answer.status, 200);
    let mut view = serde_json::Value::Null;
    let counted = within(|| {
        view = json(&rg, "/compliance");
        view["robots"]["(browser user-agents)"]["robots_txt_fetches"] == 1
    });
    assert!(counted, "{view:#}");
    let status = json(&rg, "/status.json");
    let top = status["top_robots"].as_array().unwrap();
    assert!(
        top.iter().any(|r| r["agent"] == "(browser user-agents)"),
        "{status:#}"
    );
}
