//! The sweep's tests. Those that make the test process a subreaper run alone, each in a copy
//! of the test binary of its own ([`in_a_process_of_its_own`]).

use std::path::Path;

use super::*;
use crate::process::{Spec, Termination, run};

/// Set in the copy of the test binary that [`in_a_process_of_its_own`] starts.
const OWN_PROCESS: &str = "PRPD_TEST_OWN_PROCESS";

/// Runs the test `name` of this module alone in a new copy of the test binary. A subreaper
/// adopts every orphan of the test process, and a sweep stops them all, including the
/// children of tests running beside it; alone, the test's process is prpd's situation.
async fn in_a_process_of_its_own(name: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let binary = std::env::current_exe().expect("the test binary");
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, rest)| rest);
    let mut spec = Spec::argv(
        vec![
            binary.display().to_string(),
            format!("{module}::{name}"),
            "--exact".to_owned(),
            "--ignored".to_owned(),
            "--nocapture".to_owned(),
        ],
        dir.path(),
        &dir.path().join("test.log"),
    );
    spec.env = vec![(OWN_PROCESS.to_owned(), "1".to_owned())];
    spec.timeout = Duration::from_secs(60);
    spec.tail_lines = 200;
    let outcome = run(spec).await.expect("runs the test binary");
    assert!(
        outcome.success() && outcome.tail.contains("1 passed"),
        "{name} in its own process:\n{}",
        outcome.tail
    );
}

fn alone() -> bool {
    std::env::var_os(OWN_PROCESS).is_some()
}

fn alive(pid: i32) -> bool {
    Stat::read(pid).is_some_and(|stat| stat.alive())
}

/// The pids an agent script wrote to `path`, one a line.
fn pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .expect("pid file")
        .lines()
        .map(|line| line.trim().parse().expect("a pid"))
        .collect()
}

/// Runs `script` as an agent would be run, in `dir`; it must exit 0.
async fn agent(script: &str, dir: &Path) {
    let outcome = run(Spec::shell(script, dir, &dir.join("agent.log")))
        .await
        .expect("runs");
    assert_eq!(
        outcome.termination,
        Termination::Exited(0),
        "{}",
        outcome.tail
    );
}

#[tokio::test]
async fn processes_marked_with_a_run_are_found_and_stopped_wherever_they_went() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mark = format!("run-{}-{}", std::process::id(), dir.path().display());
    let script = format!(
        "export PRPD_TEST_MARK='{mark}'; setsid sh -c 'echo $$ > escaped; exec sleep 30' & \
         while [ ! -s escaped ]; do sleep 0.01; done"
    );
    agent(&script, dir.path()).await;
    let escaped = pids(&dir.path().join("escaped"))[0];
    assert!(alive(escaped), "the escaped process runs");
    assert!(stop_marked("PRPD_TEST_MARK", "another-run").is_empty());
    let stopped = stop_marked("PRPD_TEST_MARK", &mark);
    assert_eq!(
        stopped
            .iter()
            .map(|leftover| leftover.pid)
            .collect::<Vec<_>>(),
        [escaped]
    );
    assert!(stopped[0].command.contains("sleep 30"), "{stopped:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(escaped) && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    assert!(!alive(escaped), "the marked process was stopped");
}

#[test]
fn stat_lines_with_odd_names_are_read() {
    let mut fields = vec!["0"; 52];
    fields[0] = "Z";
    fields[1] = "77";
    fields[2] = "70";
    fields[19] = "123456";
    let text = format!("4242 (a) b (c) {}\n", fields.join(" "));
    let stat = Stat::parse(&text).expect("parses");
    assert_eq!(
        stat,
        Stat {
            pid: 4242,
            name: "a) b (c".to_owned(),
            state: 'Z',
            ppid: 77,
            pgid: 70,
            start: 123_456,
        }
    );
    assert!(!stat.alive());
    assert_eq!(Stat::parse("4242 (cut"), None);
}

#[test]
fn leftovers_are_the_adopted_processes_and_their_descendants() {
    let stat = |pid, ppid, state| Stat {
        pid,
        name: format!("p{pid}"),
        state,
        ppid,
        pgid: pid,
        start: 1,
    };
    let table = vec![
        stat(10, 1, 'S'),  // prpd
        stat(11, 10, 'S'), // adopted
        stat(12, 11, 'R'), // its child
        stat(13, 12, 'S'), // its grandchild
        stat(14, 10, 'Z'), // an adopted zombie: dead
        stat(15, 14, 'S'), // the child of a zombie whose other threads still exit
        stat(20, 1, 'S'),  // unrelated
        stat(21, 20, 'S'),
    ];
    let pids: Vec<i32> = leftovers(&table, 10).iter().map(|stat| stat.pid).collect();
    assert_eq!(
        pids.iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([11, 12, 13, 15])
    );
    assert!(leftovers(&table, 13).is_empty());
}

#[tokio::test]
async fn an_escaped_sleep_is_stopped_and_reported() {
    in_a_process_of_its_own("escaped_sleep_alone").await;
}

#[tokio::test]
#[ignore = "run alone by an_escaped_sleep_is_stopped_and_reported"]
async fn escaped_sleep_alone() {
    if !alone() {
        return;
    }
    become_subreaper().expect("subreaper");
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pids");
    // A new session (what Claude Code's Bash tool does), and a double fork in a second one.
    let script = format!(
        "setsid sleep 30 >/dev/null 2>&1 & echo $! > '{pids}'\n\
         setsid sh -c '(sleep 31 & echo $! >> \"{pids}\") ; exit 0' >/dev/null 2>&1 &\n\
         sleep 0.3; exit 0",
        pids = pid_file.display()
    );
    agent(&script, dir.path()).await;
    let escaped = pids(&pid_file);
    assert_eq!(escaped.len(), 2, "{escaped:?}");
    assert!(
        escaped.iter().all(|pid| alive(*pid)),
        "they escaped the group"
    );

    let stopped = stop_leftovers().await;
    for pid in &escaped {
        assert!(!alive(*pid), "{pid} survived");
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} was not reaped"
        );
    }
    let reported: BTreeMap<i32, &str> = stopped
        .iter()
        .map(|leftover| (leftover.pid, leftover.command.as_str()))
        .collect();
    assert_eq!(reported.get(&escaped[0]), Some(&"sleep 30"), "{stopped:?}");
    assert_eq!(reported.get(&escaped[1]), Some(&"sleep 31"), "{stopped:?}");
    assert!(stop_leftovers().await.is_empty());
}

#[tokio::test]
async fn a_measurements_leftover_is_told_from_an_agents() {
    in_a_process_of_its_own("measurement_and_agent_leftovers_alone").await;
}

#[tokio::test]
#[ignore = "run alone by a_measurements_leftover_is_told_from_an_agents"]
async fn measurement_and_agent_leftovers_alone() {
    if !alone() {
        return;
    }
    become_subreaper().expect("subreaper");
    let dir = tempfile::tempdir().expect("tempdir");
    let leave = |file: &str| {
        format!(
            "setsid sleep 30 >/dev/null 2>&1 < /dev/null & echo $! > '{}'; sleep 0.3; exit 0",
            dir.path().join(file).display()
        )
    };
    let measured = run(Spec::measurement(
        &leave("measured"),
        dir.path(),
        &dir.path().join("tests.log"),
    ))
    .await
    .expect("runs");
    assert_eq!(measured.termination, Termination::Exited(0));
    agent(&leave("agent"), dir.path()).await;
    let (from_measurement, from_agent) = (
        pids(&dir.path().join("measured"))[0],
        pids(&dir.path().join("agent"))[0],
    );

    let stopped = stop_leftovers().await;
    let starters: BTreeMap<i32, StartedBy> = stopped
        .iter()
        .map(|leftover| (leftover.pid, leftover.started_by))
        .collect();
    assert_eq!(
        starters,
        BTreeMap::from([
            (from_measurement, StartedBy::Measurement),
            (from_agent, StartedBy::Agent)
        ]),
        "{stopped:?}"
    );
    let lines = by_starter(&stopped);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0].0, StartedBy::Measurement);
    assert!(
        lines[0]
            .1
            .starts_with(&format!("{from_measurement} `sleep 30`"))
    );
    assert!(!alive(from_measurement) && !alive(from_agent));
}

#[tokio::test]
async fn a_tree_that_ignores_sigterm_is_killed() {
    in_a_process_of_its_own("stubborn_tree_alone").await;
}

#[tokio::test]
#[ignore = "run alone by a_tree_that_ignores_sigterm_is_killed"]
async fn stubborn_tree_alone() {
    if !alone() {
        return;
    }
    become_subreaper().expect("subreaper");
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pids");
    // An ignored signal stays ignored across fork and exec: none of the three obeys SIGTERM.
    let script = format!(
        "setsid sh -c 'trap \"\" TERM; echo $$ > \"{pids}\"; \
         sleep 30 & echo $! >> \"{pids}\"; sleep 31 & echo $! >> \"{pids}\"; wait' >/dev/null 2>&1 &\n\
         sleep 0.3; exit 0",
        pids = pid_file.display()
    );
    agent(&script, dir.path()).await;
    let tree = pids(&pid_file);
    assert_eq!(tree.len(), 3, "{tree:?}");
    assert!(tree.iter().all(|pid| alive(*pid)));

    let started = Instant::now();
    let stopped = stop_leftovers().await;
    assert!(started.elapsed() >= GRACE, "{:?}", started.elapsed());
    assert!(tree.iter().all(|pid| !alive(*pid)));
    let pids: BTreeSet<i32> = stopped.iter().map(|leftover| leftover.pid).collect();
    assert_eq!(pids, tree.iter().copied().collect(), "{stopped:?}");
}

#[tokio::test]
async fn adopted_zombies_are_reaped_and_not_reported() {
    in_a_process_of_its_own("adopted_zombie_alone").await;
}

#[tokio::test]
#[ignore = "run alone by adopted_zombies_are_reaped_and_not_reported"]
async fn adopted_zombie_alone() {
    if !alone() {
        return;
    }
    become_subreaper().expect("subreaper");
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pids");
    let script = format!(
        "setsid sleep 0.2 & echo $! > '{}'; exit 0",
        pid_file.display()
    );
    agent(&script, dir.path()).await;
    let pid = pids(&pid_file)[0];
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        assert!(Instant::now() < deadline, "the sleep did not end");
        tokio::time::sleep(POLL).await;
    }
    let zombie = Stat::read(pid).expect("an unreaped zombie");
    assert_eq!(
        (zombie.state, zombie.ppid),
        ('Z', Pid::this().as_raw()),
        "adopted by the test process"
    );

    assert!(stop_leftovers().await.is_empty());
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "not reaped");
}

#[test]
fn a_waited_for_child_is_exempt_only_while_its_start_time_is_the_recorded_one() {
    // Pids above Linux's largest pid_max: no real process, no other test, has them.
    let (service, impostor) = (4_194_400, 4_194_401);
    let table = |start| {
        let stat = |pid, ppid| Stat {
            pid,
            name: format!("p{pid}"),
            state: 'S',
            ppid,
            pgid: service,
            start,
        };
        vec![stat(10, 1), stat(service, 10), stat(service + 10, service)]
    };
    let _service = {
        let mut pids = WAITED_FOR.lock().expect("lock");
        pids.insert(service, Some(7));
        WaitedFor(service)
    };
    assert!(
        leftovers(&table(7), 10).is_empty(),
        "the recorded service and what it started are left alone"
    );
    let reused: Vec<i32> = leftovers(&table(8), 10)
        .iter()
        .map(|stat| stat.pid)
        .collect();
    assert_eq!(
        reused,
        vec![service, service + 10],
        "a process that took a freed pid is not the service"
    );
    let mut in_its_group = table(7);
    in_its_group.push(Stat {
        pid: impostor,
        name: "sleep".to_owned(),
        state: 'S',
        ppid: 10,
        pgid: service,
        start: 7,
    });
    let found: Vec<i32> = leftovers(&in_its_group, 10)
        .iter()
        .map(|stat| stat.pid)
        .collect();
    assert_eq!(
        found,
        vec![impostor],
        "a process in the service's group is not the service"
    );
}

#[tokio::test]
async fn a_live_service_survives_the_sweep_and_a_process_that_joined_its_group_does_not() {
    in_a_process_of_its_own("service_and_impostor_alone").await;
}

#[tokio::test]
#[ignore = "run alone by a_live_service_survives_the_sweep_and_a_process_that_joined_its_group_does_not"]
async fn service_and_impostor_alone() {
    if !alone() {
        return;
    }
    become_subreaper().expect("subreaper");
    let dir = tempfile::tempdir().expect("tempdir");
    let service = crate::process::Service::spawn(crate::process::ServiceSpec {
        argv: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            format!(
                "sleep 30 & echo $! > '{}'; wait",
                dir.path().join("service-child").display()
            ),
        ],
        cwd: dir.path().to_path_buf(),
        env_policy: crate::process::EnvPolicy::WithoutSecrets,
        stderr_log: dir.path().join("service.log"),
        max_log_bytes: 1024,
    })
    .expect("spawn the service");
    let leader = service.group().expect("running");
    // The agent leaves a process in the service's own group (setpgid is allowed within prpd's
    // session), and one in a session of its own.
    let script = format!(
        "python3 -c 'import os, time\nif os.fork() == 0:\n    os.setpgid(0, {leader})\n    \
         open(\"joined\", \"w\").write(str(os.getpid()))\n    time.sleep(30)' &\n\
         setsid sh -c 'echo $$ > escaped; exec sleep 29' >/dev/null 2>&1 < /dev/null &\n\
         sleep 0.5; exit 0"
    );
    agent(&script, dir.path()).await;
    let joined = pids(&dir.path().join("joined"))[0];
    let escaped = pids(&dir.path().join("escaped"))[0];
    let service_child = pids(&dir.path().join("service-child"))[0];
    assert_eq!(
        Stat::read(joined).expect("joined").pgid,
        leader,
        "it joined the service's group"
    );

    let stopped: BTreeSet<i32> = stop_leftovers()
        .await
        .iter()
        .map(|leftover| leftover.pid)
        .collect();
    assert_eq!(stopped, BTreeSet::from([joined, escaped]));
    assert!(!alive(joined) && !alive(escaped));
    assert!(alive(leader) && alive(service_child), "the service runs on");
    assert!(stop_leftovers().await.is_empty());
    drop(service);
    assert!(crate::process::group_probe::group_gone_within(
        leader,
        Duration::from_secs(2)
    ));
}
