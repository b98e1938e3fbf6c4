//! The console's sign-in under a flood: attempts are throttled per network address and per e-mail (whether
//! or not an account has it) before any password is hashed, and the hashing itself runs on the CPU pool, so
//! `/healthz` keeps its latency while people (or a script) sign in by the dozen.

use fiscus_apptest::console::{client, enrolled_operator, sign_in};
use fiscus_apptest::{TestApp, spawn_app_with};
use fiscus_domain::people::Role;
use fiscus_kernel::settings::{ServiceClass, Settings};
use std::time::{Duration, Instant};

fn lenient_sign_in(s: &mut Settings) {
    s.sign_in_attempts_per_address = ServiceClass { quota: 1_000_000, window_seconds: 60 };
    s.sign_in_attempts_per_email = ServiceClass { quota: 1_000_000, window_seconds: 60 };
}

fn from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(Some(source.parse().expect("source")))
        .build()
        .expect("client")
}

async fn attempt(http: &reqwest::Client, app: &TestApp, email: &str) -> reqwest::Response {
    http.post(app.url("/console/login"))
        .form(&[("email", email), ("password", "not the password at all"), ("code", "000000")])
        .send()
        .await
        .expect("request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_attempts_are_throttled_per_e_mail_and_per_address() {
    // The default quotas over a day-long window: a fixed window that turned over mid-test (a minute's would,
    // now and then, on a busy machine) would start the count again and let the 31st attempt through.
    let app = spawn_app_with(|s| {
        s.sign_in_attempts_per_address.window_seconds = 86_400;
        s.sign_in_attempts_per_email.window_seconds = 86_400;
    })
    .await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    // Per e-mail (10 a minute by default), from any address, whether or not an account has it.
    for i in 0..10 {
        let source = format!("127.0.2.{}", 1 + i);
        assert_eq!(attempt(&from(&source), &app, "nobody@example.com").await.status(), 401, "attempt {i}");
    }
    let refused = attempt(&from("127.0.2.20"), &app, "Nobody@Example.com ").await;
    assert_eq!(refused.status(), 429);
    let wait: u64 = refused.headers()["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!((1..=86_400).contains(&wait), "{wait}");
    assert!(refused.text().await.expect("page").contains("Too many sign-in attempts"));
    // Per address (30 a minute by default), whatever e-mails it tries.
    let flood = from("127.0.2.30");
    for i in 0..30 {
        assert_eq!(attempt(&flood, &app, &format!("guess{i}@example.com")).await.status(), 401, "attempt {i}");
    }
    assert_eq!(attempt(&flood, &app, "guess-more@example.com").await.status(), 429);
    // Neither touches a person signing in from elsewhere.
    sign_in(&app, &op).await;
}

fn p99(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[(samples.len() * 99).div_ceil(100) - 1]
}

async fn healthz_p99(http: &reqwest::Client, app: &TestApp, n: usize) -> Duration {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let r = http.get(app.url("/healthz")).send().await.expect("healthz");
        assert_eq!(r.status(), 200);
        samples.push(started.elapsed());
    }
    p99(samples)
}

/// The bound: the p99 of `/healthz` while 32 clients sign in as fast as they are answered stays within twice
/// its idle p99 plus half of one sign-in's own time, measured in the same run. A hash run on the runtime's
/// worker threads would hold `/healthz` behind it for a whole sign-in (both workers busy hashing), so the
/// bound still fails that fault; a fixed margin of a few milliseconds failed on a busy CI machine now and
/// then with the hashing where it belongs (idle 1.0 ms, loaded 4.2 ms, one sign-in about 19 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_keeps_its_latency_under_a_sign_in_flood() {
    // The throttle is set aside here: this measures where the hashing runs, not how many are let in.
    let app = spawn_app_with(lenient_sign_in).await;
    let http = client();
    healthz_p99(&http, &app, 50).await;
    let idle = healthz_p99(&http, &app, 400).await;
    let mut one_sign_in = Vec::new();
    for n in 0..5 {
        let started = Instant::now();
        let _ = http
            .post(app.url("/console/login"))
            .form(&[
                ("email", format!("alone{n}@example.com").as_str()),
                ("password", "correct horse battery"),
                ("code", "123456"),
            ])
            .send()
            .await
            .expect("sign-in");
        one_sign_in.push(started.elapsed());
    }
    one_sign_in.sort();
    let one_sign_in = one_sign_in[2];
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let attempts = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut flood = Vec::new();
    for i in 0..32 {
        let (app_base, stop, attempts) = (app.base.clone(), stop.clone(), attempts.clone());
        flood.push(tokio::spawn(async move {
            let http = client();
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let email = format!("flood{i}-{n}@example.com");
                let _ = http
                    .post(format!("{app_base}/console/login"))
                    .form(&[("email", email.as_str()), ("password", "correct horse battery"), ("code", "123456")])
                    .send()
                    .await;
                n += 1;
                attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let loaded = healthz_p99(&http, &app, 400).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for task in flood {
        let _ = task.await;
    }
    let signed = attempts.load(std::sync::atomic::Ordering::SeqCst);
    eprintln!("healthz p99 idle {idle:?}, under {signed} sign-in attempts {loaded:?}; one sign-in {one_sign_in:?}");
    assert!(signed >= 32, "the flood ran ({signed} attempts)");
    assert!(
        loaded <= idle * 2 + one_sign_in / 2,
        "healthz p99 idle {idle:?}, under the flood {loaded:?}, one sign-in {one_sign_in:?}"
    );
}
