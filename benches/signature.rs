//! `SignatureVerifier::verify` with a warm key-directory cache: parsing the three headers,
//! attributing the Signature-Agent, the time window, one Ed25519 verification. Also the cost of
//! a request without a signature (what every browser pays). The directory is served once from
//! a loopback listener; every measured call is a cache hit.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ed25519_dalek::{Signer as _, SigningKey};
use http::{HeaderMap, HeaderValue, Method, Uri};
use robogate::identity::SignatureAgent;
use robogate::verify::signature::{
    Request, SignatureOutcome, SignatureSettings, SignatureVerifier,
};
use sha2::{Digest, Sha256};

/// Serves `body` as the key directory to every connection.
fn directory(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

fn signed_headers(key: &SigningKey, agent: &str) -> HeaderMap {
    let x = URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes());
    let keyid = URL_SAFE_NO_PAD.encode(Sha256::digest(format!(
        r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#
    )));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let params = format!(
        r#"("@authority" "signature-agent";key="sig1");created={};expires={};keyid="{keyid}";alg="ed25519";tag="web-bot-auth""#,
        now - 5,
        now + 3600
    );
    let base = format!(
        "\"@authority\": site.example\n\"signature-agent\";key=\"sig1\": \"{agent}\"\n\"@signature-params\": {params}"
    );
    let signature = STANDARD.encode(key.sign(base.as_bytes()).to_bytes());
    let mut headers = HeaderMap::new();
    let mut set = |name: &'static str, value: String| {
        headers.insert(name, HeaderValue::from_str(&value).unwrap());
    };
    set("signature-agent", format!("sig1=\"{agent}\""));
    set("signature-input", format!("sig1={params}"));
    set("signature", format!("sig1=:{signature}:"));
    headers
}

fn verify(c: &mut Criterion) {
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let x = URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes());
    let url = directory(format!(
        r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{x}"}}]}}"#
    ));
    let agents = vec![SignatureAgent::new("ExampleBot", &url, None).unwrap()];
    let verifier = SignatureVerifier::new(SignatureSettings::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let uri: Uri = "/page".parse().unwrap();
    let signed = signed_headers(&key, &url);
    let run = |headers: &HeaderMap| {
        let request = Request {
            method: &Method::GET,
            uri: &uri,
            authority: Some("site.example"),
            headers,
        };
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
        runtime.block_on(verifier.verify(&agents, request, SystemTime::now(), deadline))
    };
    assert!(matches!(
        run(&signed),
        SignatureOutcome::Verified { agent: 0, .. }
    ));
    c.bench_function("signature/verify_warm_cache", |b| {
        b.iter(|| black_box(run(black_box(&signed))))
    });
    let unsigned = HeaderMap::new();
    assert_eq!(run(&unsigned), SignatureOutcome::Absent);
    c.bench_function("signature/absent", |b| {
        b.iter(|| black_box(run(black_box(&unsigned))))
    });
}

criterion_group!(benches, verify);
criterion_main!(benches);
