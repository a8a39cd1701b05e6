//! Web Bot Auth against a real key directory on loopback: requests signed here with Ed25519
//! (the signature base built by hand, independently of the crate robogate verifies with),
//! checked by `SignatureVerifier::verify`. The helpers ([`Signer`], [`sign`], [`KeyDirectory`])
//! are for other test modules too: a signed request through robogate carries
//! [`Signed::headers`].

#![allow(dead_code)] // helpers for other modules

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use robogate::identity::SignatureAgent;
use robogate::verify::signature::{
    Invalid, Request, SignatureOutcome, SignatureSettings, SignatureVerifier, Unfinished,
};
use sha2::{Digest, Sha256};

use crate::support::DEADLINE;

/// An Ed25519 signing key and its JWK thumbprint (the `keyid` the drafts prescribe).
pub struct Signer {
    key: SigningKey,
    pub keyid: String,
}

impl Signer {
    pub fn generate() -> Signer {
        let key = SigningKey::generate(&mut rand_core::OsRng);
        let keyid = URL_SAFE_NO_PAD.encode(Sha256::digest(format!(
            r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#,
            x(&key)
        )));
        Signer { key, keyid }
    }

    /// The public key as a directory lists it.
    pub fn jwk(&self) -> String {
        format!(
            r#"{{"kty":"OKP","crv":"Ed25519","x":"{}","kid":"{}","use":"sig"}}"#,
            x(&self.key),
            self.keyid
        )
    }
}

fn x(key: &SigningKey) -> String {
    URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes())
}

/// The three header values of a signed request.
#[derive(Clone, Debug)]
pub struct Signed {
    pub signature_agent: String,
    pub signature_input: String,
    pub signature: String,
}

impl Signed {
    pub fn headers(&self) -> [(&'static str, String); 3] {
        [
            ("Signature-Agent", self.signature_agent.clone()),
            ("Signature-Input", self.signature_input.clone()),
            ("Signature", self.signature.clone()),
        ]
    }

    pub fn header_map(&self) -> HeaderMap {
        header_map(&self.headers())
    }
}

/// Signs a request to `authority` as the drafts profile it: label `sig1`, components
/// `("@authority" "signature-agent";key="sig1")`, `Signature-Agent: sig1="<agent_url>"`,
/// `created`/`expires` (Unix seconds), `keyid` the thumbprint, `alg="ed25519"`,
/// `tag="web-bot-auth"`.
pub fn sign(
    signer: &Signer,
    authority: &str,
    agent_url: &str,
    created: u64,
    expires: u64,
) -> Signed {
    let params = format!(
        r#"("@authority" "signature-agent";key="sig1");created={created};expires={expires};keyid="{}";alg="ed25519";tag="web-bot-auth""#,
        signer.keyid
    );
    let base = format!(
        "\"@authority\": {authority}\n\"signature-agent\";key=\"sig1\": \"{agent_url}\"\n\"@signature-params\": {params}"
    );
    let signature = signer.key.sign(base.as_bytes());
    Signed {
        signature_agent: format!("sig1=\"{agent_url}\""),
        signature_input: format!("sig1={params}"),
        signature: format!("sig1=:{}:", STANDARD.encode(signature.to_bytes())),
    }
}

/// [`sign`], covering `fields` too (each `(name, value)` as the request sends it, lower-case
/// names) and with a `nonce` parameter when given: a paid request (pay per crawl) covers its
/// `crawler-max-price` or `crawler-exact-price`.
pub fn sign_covering(
    signer: &Signer,
    authority: &str,
    agent_url: &str,
    (created, expires): (u64, u64),
    fields: &[(&str, &str)],
    nonce: Option<&str>,
) -> Signed {
    let mut components = String::from(r#""@authority" "signature-agent";key="sig1""#);
    let mut lines =
        format!("\"@authority\": {authority}\n\"signature-agent\";key=\"sig1\": \"{agent_url}\"\n");
    for (name, value) in fields {
        components.push_str(&format!(" \"{name}\""));
        lines.push_str(&format!("\"{name}\": {value}\n"));
    }
    let nonce = nonce.map_or(String::new(), |n| format!(r#";nonce="{n}""#));
    let params = format!(
        r#"({components});created={created};expires={expires}{nonce};keyid="{}";alg="ed25519";tag="web-bot-auth""#,
        signer.keyid
    );
    let base = format!("{lines}\"@signature-params\": {params}");
    let signature = signer.key.sign(base.as_bytes());
    Signed {
        signature_agent: format!("sig1=\"{agent_url}\""),
        signature_input: format!("sig1={params}"),
        signature: format!("sig1=:{}:", STANDARD.encode(signature.to_bytes())),
    }
}

/// [`sign`], naming the agent with a `type` parameter (`jwks_uri`, `cimd`) on its
/// `Signature-Agent` member, which the signature covers with it.
pub fn sign_typed(
    signer: &Signer,
    authority: &str,
    agent_url: &str,
    agent_type: &str,
    (created, expires): (u64, u64),
) -> Signed {
    let params = format!(
        r#"("@authority" "signature-agent";key="sig1");created={created};expires={expires};keyid="{}";alg="ed25519";tag="web-bot-auth""#,
        signer.keyid
    );
    let member = format!("\"{agent_url}\";type={agent_type}");
    let base = format!(
        "\"@authority\": {authority}\n\"signature-agent\";key=\"sig1\": {member}\n\"@signature-params\": {params}"
    );
    let signature = signer.key.sign(base.as_bytes());
    Signed {
        signature_agent: format!("sig1={member}"),
        signature_input: format!("sig1={params}"),
        signature: format!("sig1=:{}:", STANDARD.encode(signature.to_bytes())),
    }
}

/// Unix seconds now.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub fn header_map(headers: &[(&str, String)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

/// How the directory answers.
#[derive(Clone)]
enum Answer {
    Keys { body: String, max_age: u64 },
    Raw(String),
    Hang,
}

/// A key directory at `url` (an origin, `http://127.0.0.1:PORT`) serving
/// `/.well-known/http-message-signatures-directory`; its answer can be changed, made to hang or
/// made garbage, and it counts requests.
pub struct KeyDirectory {
    pub url: String,
    addr: SocketAddr,
    answer: Arc<Mutex<Answer>>,
    hits: Arc<AtomicUsize>,
    stopped: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl KeyDirectory {
    pub fn start(keys: &[&Signer]) -> KeyDirectory {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let answer = Arc::new(Mutex::new(Answer::Raw(String::new())));
        let (hits, stopped) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (a, h, s) = (answer.clone(), hits.clone(), stopped.clone());
        let thread = std::thread::spawn(move || serve(listener, addr, a, h, s));
        let directory = KeyDirectory {
            url: format!("http://{addr}"),
            addr,
            answer,
            hits,
            stopped,
            thread: Some(thread),
        };
        directory.set_keys(keys, 3600);
        directory
    }

    /// Serves these keys with `Cache-Control: max-age=<max_age>`.
    pub fn set_keys(&self, keys: &[&Signer], max_age: u64) {
        let jwks: Vec<String> = keys.iter().map(|k| k.jwk()).collect();
        let body = format!(r#"{{"keys":[{}]}}"#, jwks.join(","));
        *self.answer.lock().unwrap() = Answer::Keys { body, max_age };
    }

    /// Answers 200 with a body that is not a directory.
    pub fn set_garbage(&self) {
        *self.answer.lock().unwrap() = Answer::Raw("<html>not a directory</html>".into());
    }

    /// Accepts connections and never answers.
    pub fn hang(&self) {
        *self.answer.lock().unwrap() = Answer::Hang;
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Closes the listener (later fetches are refused) and every held connection.
    pub fn stop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for KeyDirectory {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serves the directory at the well-known path, and the same keys as a JWK Set at `/jwks.json`
/// (`type=jwks_uri`), as a Signature Agent Card naming that JWK Set at `/card.json` and as one
/// holding them at `/card-inline.json` (`type=cimd`).
fn serve(
    listener: TcpListener,
    addr: SocketAddr,
    answer: Arc<Mutex<Answer>>,
    hits: Arc<AtomicUsize>,
    stopped: Arc<AtomicBool>,
) {
    let mut held = Vec::new();
    for stream in listener.incoming() {
        if stopped.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        hits.fetch_add(1, Ordering::SeqCst);
        let head = String::from_utf8_lossy(&head).into_owned();
        let path = head.split(' ').nth(1).unwrap_or("/");
        let path_ok = path == "/.well-known/http-message-signatures-directory";
        let answered = answer.lock().unwrap().clone();
        if let (Answer::Keys { body, max_age }, true) = (&answered, path.ends_with(".json")) {
            let body = match path {
                "/jwks.json" => body.clone(),
                "/card.json" => format!(
                    r#"{{"client_id":"http://{addr}/card.json","client_name":"Test signer","jwks_uri":"http://{addr}/jwks.json","web_bot_auth":{{"rfc9309-product-token":"cardbot","purpose":"train-ai"}}}}"#
                ),
                "/card-inline.json" => {
                    format!(r#"{{"client_id":"http://{addr}/card-inline.json","jwks":{body}}}"#)
                }
                _ => String::new(),
            };
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: max-age={max_age}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes());
            continue;
        }
        let response = match (path_ok, answered) {
            (_, Answer::Hang) => {
                held.push(stream);
                continue;
            }
            (false, _) => "HTTP/1.1 404 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
            (true, Answer::Keys { body, max_age }) => format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/http-message-signatures-directory+json\r\nCache-Control: max-age={max_age}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
            (true, Answer::Raw(body)) => format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
        };
        let _ = stream.write_all(response.as_bytes());
    }
}

const SITE: &str = "site.example";

struct Case {
    verifier: SignatureVerifier,
    agents: Vec<SignatureAgent>,
    /// How long a check may wait (`verify.timeout` in the proxy).
    wait: Duration,
}

impl Case {
    fn new(directory: &KeyDirectory, settings: SignatureSettings) -> Case {
        let agents = vec![
            SignatureAgent::new("OtherBot", "https://other.example", None).unwrap(),
            SignatureAgent::new("ExampleBot", &directory.url, None).unwrap(),
        ];
        Case {
            verifier: SignatureVerifier::new(settings),
            agents,
            wait: DEADLINE,
        }
    }

    fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.wait
    }

    async fn verify(&self, authority: &str, headers: &HeaderMap) -> SignatureOutcome {
        let uri: Uri = "/page?x=1".parse().unwrap();
        let request = Request {
            method: &Method::GET,
            uri: &uri,
            authority: Some(authority),
            headers,
        };
        let outcome = self
            .verifier
            .verify(&self.agents, request, SystemTime::now(), self.deadline())
            .await;
        // Who signed is what these tests check; what the signature vouches for is pay per
        // crawl's (tests/it/pay_per_crawl.rs).
        match outcome {
            SignatureOutcome::Verified { agent, .. } => SignatureOutcome::Verified {
                agent,
                signed: NOTHING_VOUCHED,
            },
            other => other,
        }
    }

    async fn verify_signed(&self, signed: &Signed) -> SignatureOutcome {
        self.verify(SITE, &signed.header_map()).await
    }
}

fn valid(signer: &Signer, directory: &KeyDirectory) -> Signed {
    let now = unix_now();
    sign(signer, SITE, &directory.url, now - 5, now + 300)
}

const NOTHING_VOUCHED: robogate::verify::signature::Signed = robogate::verify::signature::Signed {
    max_price: false,
    exact_price: false,
    replay_key: [0; 32],
    expires: 0,
};
const VERIFIED: SignatureOutcome = SignatureOutcome::Verified {
    agent: 1,
    signed: NOTHING_VOUCHED,
};

#[tokio::test]
async fn signatures_verify_against_the_directory_and_bad_ones_say_why() {
    let (signer, stranger) = (Signer::generate(), Signer::generate());
    let directory = KeyDirectory::start(&[&signer]);
    let case = Case::new(&directory, SignatureSettings::default());
    let now = unix_now();

    assert_eq!(
        case.verify_signed(&valid(&signer, &directory)).await,
        VERIFIED
    );
    let signed = valid(&signer, &directory);
    assert_eq!(
        case.verify("evil.example", &signed.header_map()).await,
        SignatureOutcome::Invalid(Invalid::BadSignature),
        "a signature for another authority"
    );
    assert_eq!(
        case.verify_signed(&valid(&stranger, &directory)).await,
        SignatureOutcome::Invalid(Invalid::UnknownKey)
    );
    assert_eq!(
        case.verify_signed(&sign(&signer, SITE, &directory.url, now - 3600, now - 120))
            .await,
        SignatureOutcome::Invalid(Invalid::Expired)
    );
    assert_eq!(
        case.verify_signed(&sign(&signer, SITE, &directory.url, now + 600, now + 900))
            .await,
        SignatureOutcome::Invalid(Invalid::NotYetValid)
    );
    assert_eq!(
        case.verify_signed(&sign(
            &signer,
            SITE,
            "https://unknown.example",
            now,
            now + 60
        ))
        .await,
        SignatureOutcome::Invalid(Invalid::UnknownAgent)
    );
    // The same agent spelled differently: attributed alike, but the covered value changed.
    let mut swapped = valid(&signer, &directory);
    swapped.signature_agent = format!("sig1=\"{}/\"", directory.url);
    assert_eq!(
        case.verify_signed(&swapped).await,
        SignatureOutcome::Invalid(Invalid::BadSignature),
        "the covered Signature-Agent cannot be changed"
    );
    for (input, signature) in [
        ("sig1=(((", signed.signature.as_str()),
        (signed.signature_input.as_str(), "sig1=not-bytes"),
        (signed.signature_input.as_str(), "sig2=:AAAA:"),
    ] {
        let headers = header_map(&[
            ("Signature-Agent", signed.signature_agent.clone()),
            ("Signature-Input", input.into()),
            ("Signature", signature.into()),
        ]);
        assert_eq!(
            case.verify(SITE, &headers).await,
            SignatureOutcome::Invalid(Invalid::Malformed),
            "{input} / {signature}"
        );
    }
    let mut truncated = valid(&signer, &directory);
    truncated.signature = "sig1=:AAAA:".into();
    assert_eq!(
        case.verify_signed(&truncated).await,
        SignatureOutcome::Invalid(Invalid::BadSignature)
    );
    assert_eq!(
        case.verify(SITE, &HeaderMap::new()).await,
        SignatureOutcome::Absent
    );
    let untagged = header_map(&[
        (
            "Signature-Input",
            r#"sig1=("@authority");created=1;keyid="k""#.into(),
        ),
        ("Signature", "sig1=:AAAA:".into()),
    ]);
    assert_eq!(case.verify(SITE, &untagged).await, SignatureOutcome::Absent);
    assert_eq!(directory.hits(), 1, "one fetch served every check");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_directory_is_fetched_once_for_concurrent_requests_and_kept_when_it_goes_away() {
    let signer = Signer::generate();
    let mut directory = KeyDirectory::start(&[&signer]);
    let case = Arc::new(Case::new(&directory, SignatureSettings::default()));
    let signed = valid(&signer, &directory);
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (case, signed) = (case.clone(), signed.clone());
            tokio::spawn(async move { case.verify_signed(&signed).await })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), VERIFIED);
    }
    assert_eq!(directory.hits(), 1, "single flight");
    directory.stop();
    assert_eq!(
        case.verify_signed(&valid(&signer, &directory)).await,
        VERIFIED
    );
}

#[tokio::test]
async fn a_hanging_directory_is_unfinished_within_the_fetch_timeout() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    directory.hang();
    let settings = SignatureSettings {
        fetch_timeout: Duration::from_millis(300),
        ..SignatureSettings::default()
    };
    let case = Case::new(&directory, settings);
    let started = Instant::now();
    let outcome = tokio::time::timeout(DEADLINE, case.verify_signed(&valid(&signer, &directory)))
        .await
        .expect("verify returned");
    assert_eq!(outcome, SignatureOutcome::Unfinished(Unfinished::Timeout));
    assert!(started.elapsed() < DEADLINE / 3, "{:?}", started.elapsed());
    // Remembered: the next request does not wait for the directory again.
    let again = case.verify_signed(&valid(&signer, &directory)).await;
    assert_eq!(again, SignatureOutcome::Unfinished(Unfinished::Timeout));
    assert_eq!(directory.hits(), 1);
}

#[tokio::test]
async fn a_garbage_or_missing_directory_is_unfinished_and_not_hammered() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    directory.set_garbage();
    let case = Case::new(&directory, SignatureSettings::default());
    for _ in 0..10 {
        assert_eq!(
            case.verify_signed(&valid(&signer, &directory)).await,
            SignatureOutcome::Unfinished(Unfinished::Garbage)
        );
    }
    assert_eq!(directory.hits(), 1, "the failure is cached");

    let mut gone = KeyDirectory::start(&[&signer]);
    gone.stop();
    let case = Case::new(&gone, SignatureSettings::default());
    assert_eq!(
        case.verify_signed(&valid(&signer, &gone)).await,
        SignatureOutcome::Unfinished(Unfinished::Unreachable)
    );
}

#[tokio::test]
async fn a_directory_expires_with_its_max_age_and_rotated_keys_are_picked_up() {
    let (old, new) = (Signer::generate(), Signer::generate());
    let directory = KeyDirectory::start(&[&old]);
    directory.set_keys(&[&old], 1);
    let settings = SignatureSettings {
        min_ttl: Duration::ZERO,
        unknown_key_refetch: Duration::from_secs(3600), // only expiry may refetch here
        ..SignatureSettings::default()
    };
    let case = Case::new(&directory, settings);
    assert_eq!(case.verify_signed(&valid(&old, &directory)).await, VERIFIED);
    directory.set_keys(&[&new], 3600);
    assert_eq!(directory.hits(), 1);
    // Until max-age=1 runs out the old key still verifies; then the directory is refetched.
    let started = Instant::now();
    loop {
        let outcome = case.verify_signed(&valid(&old, &directory)).await;
        if outcome == SignatureOutcome::Invalid(Invalid::UnknownKey) {
            break;
        }
        assert_eq!(outcome, VERIFIED);
        assert!(started.elapsed() < DEADLINE, "the directory never expired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(case.verify_signed(&valid(&new, &directory)).await, VERIFIED);
    assert_eq!(directory.hits(), 2);

    // An unknown keyid refetches a directory older than `unknown_key_refetch` at once.
    let newer = Signer::generate();
    let eager = Case::new(
        &directory,
        SignatureSettings {
            unknown_key_refetch: Duration::ZERO,
            ..SignatureSettings::default()
        },
    );
    assert_eq!(
        eager.verify_signed(&valid(&new, &directory)).await,
        VERIFIED
    );
    directory.set_keys(&[&new, &newer], 3600);
    assert_eq!(
        eager.verify_signed(&valid(&newer, &directory)).await,
        VERIFIED
    );
}

/// Keys past their lifetime answer at once while the directory is refreshed in the background:
/// a directory that hangs then neither holds its signer's requests nor leaves a forgery
/// unchecked (unverified, and so served as it claims).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_keys_answer_while_a_hanging_directory_is_refreshed() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    directory.set_keys(&[&signer], 1);
    let settings = SignatureSettings {
        min_ttl: Duration::ZERO,
        fetch_timeout: DEADLINE,
        ..SignatureSettings::default()
    };
    let case = Case::new(&directory, settings);
    assert_eq!(
        case.verify_signed(&valid(&signer, &directory)).await,
        VERIFIED
    );
    directory.hang();
    // The signer's key under a stranger's signature.
    let forger = Signer {
        key: Signer::generate().key,
        keyid: signer.keyid.clone(),
    };
    let started = Instant::now();
    // Until max-age=1 runs out and the refresh begins (and hangs), then once more.
    let mut rounds_after = 0;
    while rounds_after < 2 {
        assert!(started.elapsed() < DEADLINE, "the directory never expired");
        rounds_after += usize::from(directory.hits() >= 2);
        for (who, want) in [(&signer, true), (&forger, false)] {
            let outcome =
                tokio::time::timeout(DEADLINE / 4, case.verify_signed(&valid(who, &directory)))
                    .await
                    .expect("answered without waiting for the directory");
            assert_eq!(outcome == VERIFIED, want, "{outcome:?}");
            assert!(
                !matches!(outcome, SignatureOutcome::Unfinished(_)),
                "{outcome:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(directory.hits(), 2, "one refresh at a time");
}

/// An unknown keyid refetches the directory, but a refetch that cannot finish within the
/// request's wait leaves the keys at hand to answer: the key is unknown (a forgery is refused),
/// not an unchecked claim served as made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_keyid_is_refused_when_its_refetch_cannot_finish() {
    let (signer, stranger) = (Signer::generate(), Signer::generate());
    let directory = KeyDirectory::start(&[&signer]);
    let mut case = Case::new(
        &directory,
        SignatureSettings {
            unknown_key_refetch: Duration::ZERO,
            fetch_timeout: DEADLINE,
            ..SignatureSettings::default()
        },
    );
    assert_eq!(
        case.verify_signed(&valid(&signer, &directory)).await,
        VERIFIED
    );
    directory.hang();
    case.wait = Duration::from_millis(300);
    for _ in 0..3 {
        let outcome = tokio::time::timeout(
            DEADLINE / 3,
            case.verify_signed(&valid(&stranger, &directory)),
        )
        .await
        .expect("answered by the request's deadline");
        assert_eq!(outcome, SignatureOutcome::Invalid(Invalid::UnknownKey));
        // The signer's own key still verifies meanwhile.
        assert_eq!(
            case.verify_signed(&valid(&signer, &directory)).await,
            VERIFIED
        );
    }
    assert_eq!(directory.hits(), 2, "one refetch, still hanging");
}

/// A signer named by a JWK Set's URL (`type=jwks_uri`) or by its Signature Agent Card's
/// (`type=cimd`; the card naming its JWK Set, or holding it) is checked against the keys found
/// there; a card that is not its own URL's proves nothing.
#[tokio::test]
async fn keys_are_found_through_a_jwks_uri_and_a_signature_agent_card() {
    let signer = Signer::generate();
    let directory = KeyDirectory::start(&[&signer]);
    let now = unix_now();
    for (path, kind) in [
        ("/jwks.json", "jwks_uri"),
        ("/card.json", "cimd"),
        ("/card-inline.json", "cimd"),
    ] {
        let url = format!("{}{path}", directory.url);
        let discovery: robogate::identity::Discovery = kind.parse().unwrap();
        let agents = vec![SignatureAgent::new("cardbot", &url, None)
            .unwrap()
            .with_discovery(discovery)];
        let verifier = SignatureVerifier::new(SignatureSettings::default());
        let signed = sign_typed(&signer, SITE, &url, kind, (now - 5, now + 300));
        let uri: Uri = "/page".parse().unwrap();
        let headers = signed.header_map();
        let request = Request {
            method: &Method::GET,
            uri: &uri,
            authority: Some(SITE),
            headers: &headers,
        };
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let outcome = verifier
            .verify(&agents, request, SystemTime::now(), deadline)
            .await;
        assert!(
            matches!(outcome, SignatureOutcome::Verified { agent: 0, .. }),
            "{path} as {kind}: {outcome:?}"
        );
        // The same URL named as another kind: not how the signer publishes its keys, refused
        // (a wrong type must not turn a forged claim into an unchecked one).
        let wrong = if kind == "cimd" { "jwks_uri" } else { "cimd" };
        let signed = sign_typed(&signer, SITE, &url, wrong, (now - 5, now + 300));
        let headers = signed.header_map();
        let request = Request {
            headers: &headers,
            ..request
        };
        let outcome = verifier
            .verify(&agents, request, SystemTime::now(), deadline)
            .await;
        assert_eq!(
            outcome,
            SignatureOutcome::Invalid(Invalid::WrongType),
            "{path} as {wrong}"
        );
    }
}
