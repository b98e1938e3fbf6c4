//! Folders shared with another party (the bank channel's inbound, outbound and staging directories): every
//! step below the configured root goes through an open directory descriptor (`openat`, `mkdirat`,
//! `renameat`) with `O_NOFOLLOW`, so nothing Fiscus opens, writes or moves there is reached through a
//! symbolic link, and no path can leave the root, whatever the other party puts in the folder or swaps in
//! between a check and a use. Files are opened without following a link and then checked on the same
//! descriptor to be regular files; reads stop at a stated size.
//!
//! The root itself is configuration (a deployment may well reach it through a link it made); what is found
//! under it is not trusted.

use rustix::fs::{FileType, Mode, OFlags};
use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// A directory held open: each name under it is one path component resolved from this descriptor.
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
    /// For messages only, never reopened.
    path: PathBuf,
}

/// What a bounded read found instead of a regular file's bytes.
#[derive(Debug)]
pub enum Refused {
    /// Nothing under that name (another node took it meanwhile).
    Gone,
    /// A symbolic link: never followed.
    Link,
    /// A directory, FIFO, socket or device: not a file someone dropped.
    NotRegular,
    /// More bytes than the cap.
    TooLarge {
        cap: u64,
    },
    Io(io::Error),
}

impl Refused {
    /// The rule the entry broke, in words that name no byte of what it holds or points at.
    pub fn rule(&self) -> String {
        match self {
            Refused::Gone => "the file is gone".into(),
            Refused::Link => "a symbolic link: the folder takes regular files only and never follows a link".into(),
            Refused::NotRegular => "not a regular file".into(),
            Refused::TooLarge { cap } => format!("larger than the folder's limit of {cap} bytes"),
            Refused::Io(e) => format!("could not be read ({})", e.kind()),
        }
    }
}

/// What an entry of a folder is, from its directory entry (not following a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    Link,
    /// A FIFO, socket, device, or a filesystem that does not say in its entries.
    Other,
}

impl Folder {
    /// Opens the configured root, creating it when missing. The root may be reached through a link.
    pub fn root(path: &Path) -> io::Result<Folder> {
        std::fs::create_dir_all(path)?;
        Self::open_root(path)
    }

    /// Opens the configured root if it exists; `None` when it does not.
    pub fn existing_root(path: &Path) -> io::Result<Option<Folder>> {
        match Self::open_root(path) {
            Ok(f) => Ok(Some(f)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn open_root(path: &Path) -> io::Result<Folder> {
        let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(Folder { fd, path: path.to_path_buf() })
    }

    /// Where this folder is, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The subfolder `name`, a real directory (a link there is refused with `NotADirectory`-like errors:
    /// `ELOOP` or `ENOTDIR`); `None` when absent.
    pub fn sub(&self, name: &str) -> io::Result<Option<Folder>> {
        component(name)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Some(Folder { fd, path: self.path.join(name) })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The subfolder `name`, created (mode 0750) when absent; a link there is refused.
    pub fn sub_created(&self, name: &str) -> io::Result<Folder> {
        component(name)?;
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o750)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        self.sub(name)?.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{name} vanished")))
    }

    /// The folder's entries by name, sorted, each with what its directory entry says it is.
    pub fn entries(&self) -> io::Result<Vec<(String, Kind)>> {
        let mut found = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().to_str() else { continue };
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Directory,
                FileType::Symlink => Kind::Link,
                _ => Kind::Other,
            };
            found.push((name.to_string(), kind));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(found)
    }

    /// Reads the regular file `name` whole if it holds at most `cap` bytes: opened without following a
    /// link (and without blocking on a FIFO), checked to be a regular file on the opened descriptor, and
    /// read no further than `cap + 1` bytes whatever its size says.
    pub fn read_bounded(&self, name: &str, cap: u64) -> Result<Vec<u8>, Refused> {
        component(name).map_err(Refused::Io)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Err(Refused::Gone),
            // O_NOFOLLOW on a link: ELOOP (Linux), EMLINK (FreeBSD), EFTYPE elsewhere.
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::MLINK) => return Err(Refused::Link),
            Err(e) => return Err(Refused::Io(e.into())),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| Refused::Io(e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(Refused::NotRegular);
        }
        if u64::try_from(stat.st_size).unwrap_or(u64::MAX) > cap {
            return Err(Refused::TooLarge { cap });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(stat.st_size).unwrap_or(0));
        File::from(fd).take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(Refused::Io)?;
        if bytes.len() as u64 > cap {
            return Err(Refused::TooLarge { cap });
        }
        Ok(bytes)
    }

    /// Creates (or truncates) the regular file `name` for writing, never through a link (mode 0640).
    pub fn create(&self, name: &str) -> io::Result<File> {
        component(name)?;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = rustix::fs::openat(&self.fd, name, flags | OFlags::NONBLOCK, Mode::from_raw_mode(0o640))?;
        if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!("{}: not a regular file", self.path.join(name).display())));
        }
        Ok(File::from(fd))
    }

    /// Moves the entry `name` into `to` under `to_name` (a link moves as the link; nothing is followed).
    pub fn rename(&self, name: &str, to: &Folder, to_name: &str) -> io::Result<()> {
        component(name)?;
        component(to_name)?;
        rustix::fs::renameat(&self.fd, name, &to.fd, to_name).map_err(Into::into)
    }

    /// Syncs the directory itself (a rename or a new entry in it is durable once this returns).
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(self.fd.as_fd()).map_err(Into::into)
    }

    /// The device this folder is on (a rename is atomic only within one).
    pub fn device(&self) -> io::Result<u64> {
        Ok(rustix::fs::fstat(&self.fd)?.st_dev)
    }
}

/// One path component: not empty, not `.` or `..`, no separator, no NUL.
fn component(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{name:?} is not one name in a folder")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_never_followed_for_a_file_or_a_folder() {
        let dir = tempfile::tempdir().expect("test setup");
        let secret = dir.path().join("secret.key");
        std::fs::write(&secret, "00112233").expect("test setup");
        let root = Folder::root(&dir.path().join("inbound")).expect("test setup");
        std::os::unix::fs::symlink(&secret, dir.path().join("inbound/key.xml")).expect("test setup");
        assert!(matches!(root.read_bounded("key.xml", 1 << 20), Err(Refused::Link)));
        std::os::unix::fs::symlink(dir.path(), dir.path().join("inbound/ws")).expect("test setup");
        assert!(root.sub("ws").is_err());
        assert!(root.sub_created("ws").is_err());
        // Writing through a link planted under the created name is refused too.
        assert!(root.create("key.xml").is_err());
        assert_eq!(std::fs::read_to_string(&secret).expect("test setup"), "00112233");
        assert!(root.sub("../x").is_err());
    }

    #[test]
    fn a_read_stops_at_its_cap() {
        let dir = tempfile::tempdir().expect("test setup");
        let root = Folder::root(dir.path()).expect("test setup");
        std::fs::write(dir.path().join("big.xml"), vec![b'a'; 4097]).expect("test setup");
        std::fs::write(dir.path().join("ok.xml"), vec![b'a'; 4096]).expect("test setup");
        assert!(matches!(root.read_bounded("big.xml", 4096), Err(Refused::TooLarge { cap: 4096 })));
        assert_eq!(root.read_bounded("ok.xml", 4096).expect("test setup").len(), 4096);
        assert!(matches!(root.read_bounded("none.xml", 4096), Err(Refused::Gone)));
        std::fs::create_dir(dir.path().join("d.xml")).expect("test setup");
        assert!(matches!(root.read_bounded("d.xml", 4096), Err(Refused::NotRegular)));
    }
}
