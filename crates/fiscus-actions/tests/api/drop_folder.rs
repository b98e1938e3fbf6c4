//! The bank channel's folders trust nothing found in them (issue 54): a file or folder that is a symbolic
//! link is never followed, a reason names the file and the rule it broke and never what it holds, nothing
//! is read past the folder's size limit, and nothing Fiscus writes goes through a link someone planted.

use fiscus_apptest::bank::bank_app_with;
use std::os::unix::fs::symlink;

const SECRET: &str = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7";

#[tokio::test]
async fn the_inbound_folder_follows_no_link_and_reads_no_file_past_its_limit() {
    let dir = tempfile::tempdir().expect("dir");
    let app = bank_app_with(dir.path(), |s| {
        if let Some(files) = s.iso20022.as_mut() {
            files.inbound_max_bytes = 4096;
        }
    })
    .await;
    let secret = dir.path().join("secret.key");
    std::fs::write(&secret, SECRET).expect("secret");
    let workspace = dir.path().join("inbound").join(&app.workspace_id);
    let inbound = workspace.join("production");
    std::fs::create_dir_all(&inbound).expect("inbound");

    // A file that is a link to a secret, and one to a system file.
    symlink(&secret, inbound.join("key.xml")).expect("link");
    symlink("/etc/passwd", inbound.join("passwd.xml")).expect("link");
    // A file past the limit, and a document that is no bank message, holding words of its own.
    std::fs::write(inbound.join("big.xml"), format!("<a>{}</a>", "x".repeat(5000))).expect("big");
    std::fs::write(inbound.join("notes.xml"), format!("<notes>{SECRET}</notes>")).expect("notes");
    // A link planted where the reason of `big.xml` will be written, pointing at a file outside.
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "untouched").expect("victim");
    std::fs::create_dir_all(inbound.join("refused")).expect("refused");
    symlink(&victim, inbound.join("refused").join("big.xml.reason")).expect("link");
    // An environment folder that is a link to a folder outside the inbound directory.
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("stm.xml"), "<Document/>").expect("outside file");
    symlink(&outside, workspace.join("sandbox")).expect("link");

    app.drain().await;

    let reason = |name: &str| std::fs::read_to_string(inbound.join("refused").join(format!("{name}.reason")));
    for name in ["key.xml", "passwd.xml"] {
        let why = reason(name).expect("a reason");
        assert!(why.contains("symbolic link"), "{name}: {why}");
        assert!(!why.contains("5ec7") && !why.contains("root:"), "{name}: no content in {why}");
        let moved = inbound.join("refused").join(name);
        assert!(std::fs::symlink_metadata(&moved).expect("moved").file_type().is_symlink(), "the link itself moved");
    }
    let notes = reason("notes.xml").expect("a reason");
    assert!(notes.contains("not an ISO 20022 message") && !notes.contains("5ec7"), "{notes}");
    // The reason of the file past the limit could not be written through the planted link; the file stays
    // where it was dropped, and the file the link points at is untouched.
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "untouched");
    assert!(inbound.join("big.xml").exists());
    assert_eq!(std::fs::read_to_string(&secret).expect("secret"), SECRET);
    // Nothing outside was read, moved or created.
    assert!(outside.join("stm.xml").exists());
    assert!(!outside.join("processed").exists() && !outside.join("refused").exists());

    // With the planted link gone, the file past the limit is refused by its size, unread past it.
    std::fs::remove_file(inbound.join("refused").join("big.xml.reason")).expect("unlink");
    app.drain().await;
    let big = reason("big.xml").expect("a reason");
    assert!(big.contains("limit of 4096 bytes"), "{big}");
    assert_eq!(app.count("SELECT COUNT(*) FROM bank_messages").await, 0, "nothing was imported");
}

#[tokio::test]
async fn payment_files_are_never_written_through_a_planted_link() {
    let dir = tempfile::tempdir().expect("dir");
    let app = bank_app_with(dir.path(), |_| {}).await;
    let key = fiscus_apptest::bank::production_key(&app).await;
    let supplier = fiscus_apptest::bank::accounts(&app, &key).await;
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "untouched").expect("victim");
    // Whoever collects from the outbound folder made the workspace's staging folder a link elsewhere.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    std::fs::create_dir_all(dir.path().join("staging").join(&app.workspace_id)).expect("staging");
    symlink(&elsewhere, dir.path().join("staging").join(&app.workspace_id).join("production")).expect("link");

    let id = fiscus_apptest::bank::propose(&app, &key, &supplier, 125_000, "INV-2026-077").await;
    fiscus_apptest::bank::approve_and_execute(&app, &key, std::slice::from_ref(&id)).await;
    app.drain().await;
    assert_eq!(std::fs::read_dir(&elsewhere).expect("elsewhere").count(), 0, "nothing written through the link");
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "untouched");
    let outbound = dir.path().join("outbound").join(&app.workspace_id).join("production");
    assert!(!outbound.exists() || std::fs::read_dir(&outbound).expect("outbound").count() == 0, "not published");

    // The link removed, the file is published from its stored bytes at the next pass.
    std::fs::remove_file(dir.path().join("staging").join(&app.workspace_id).join("production")).expect("unlink");
    app.drain().await;
    assert_eq!(std::fs::read_dir(&outbound).expect("outbound").count(), 1, "published once the folder is real");
}
