//! For tests only (this crate's and, with the `test-support` feature, other crates'): whether a
//! process group still has a live member, read from `/proc`. Every test that proves a group was
//! stopped (the process module's, the MCP memory server's) asks the same way, so it is written
//! once. A signal-0 probe would still see the zombies that `killpg` leaves until they are reaped;
//! they count as gone here.

use std::time::{Duration, Instant};

/// Whether no live process (zombies do not count) has process group `pgid`.
pub fn is_group_gone(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    !entries.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // Fields after the command name, which is in parentheses and may hold anything.
        let Some((_, after_name)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let state = fields.first().copied().unwrap_or("Z");
        let group = fields.get(2).and_then(|field| field.parse::<i32>().ok());
        group == Some(pgid) && state != "Z" && state != "X"
    })
}

/// Whether group `pgid` is gone within `limit`, looking every 20 ms.
pub fn group_gone_within(pgid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if is_group_gone(pgid) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
