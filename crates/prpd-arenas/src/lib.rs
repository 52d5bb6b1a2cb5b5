//! How many malloc arenas the daemon's threads share.
//!
//! glibc's malloc gives a thread that allocates while the others hold their arenas an arena of
//! its own, up to eight per core, and never gives an arena back. A daemon that drives runs has
//! many short-lived threads (tokio's blocking pool for git and the memory store, the run's file
//! watcher, each check's readers), so over a few runs it collects a dozen arenas, each holding
//! pages that a few long-lived allocations keep from going back to the system: its anonymous
//! memory grew by 0.12 MB a run, 6 MB over 50 runs (`cargo bench --bench soak`). With two
//! arenas it grows by 0.02 MB a run after the first ten, and ends 6 MB lower; the daemon's
//! threads mostly wait for processes, so they seldom contend for them.
//!
//! Other C libraries (musl, macOS) keep no such per-thread arenas: [`limit`] does nothing there.

/// The arenas the daemon's allocations share.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENAS: libc::c_int = 2;

/// Limits glibc's malloc to [`ARENAS`] arenas for the rest of the process; call it before the
/// threads that allocate start. Returns whether malloc took the setting.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn limit() -> bool {
    #[expect(
        unsafe_code,
        reason = "mallopt is C; it takes two integers, touches no memory of ours, and may be called at any time"
    )]
    let set = unsafe { libc::mallopt(libc::M_ARENA_MAX, ARENAS) };
    set == 1
}

/// Nothing to limit outside glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn limit() -> bool {
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn malloc_takes_the_limit() {
        assert!(super::limit());
    }
}
