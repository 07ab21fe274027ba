// The Quartz side of the round trip (scripts/realsys/quartz/roundtrip.sh): real Quartz scheduler nodes, clustered,
// with the JDBC job store (JobStoreTX), whose jobs write a ledger row when they start and when they end.
//
//   java realsys.Rt schedule JDBC_URL DELEGATE N SLEEP_MS       Scheduler.scheduleJob from a scheduler that is never
//                                                               started: job-1..N (requestRecovery, a trigger
//                                                               JobDataMap entry tkey = tval-<i>), norecover (does not
//                                                               request recovery, priority 10) and gone (realsys.GoneJob)
//   java realsys.Rt add JDBC_URL DELEGATE NAME SLEEP_MS         one more job NAME, due now
//   java realsys.Rt node JDBC_URL DELEGATE INSTANCE CHECKIN_MS THREADS
//                                                               a scheduler node, until SIGTERM (then shutdown(true))
//
// -Drt.useProperties=true sets org.quartz.jobStore.useProperties: JobDataMaps stored as java.util.Properties text.
//
// The ledger (rt_ledger, made by roundtrip.sh): one 'start' row and, unless the node dies first, one 'done' row per
// run, with the node, whether Quartz ran it as a recovery (JobExecutionContext.isRecovering) and what the merged
// JobDataMap held (QRTZ_FAILED_JOB_ORIG_TRIGGER_NAME and the trigger's own tkey).
package realsys;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Properties;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDataMap;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.Scheduler;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.utils.ConnectionProvider;

public class Rt {
    static String url() {
        return System.getProperty("rt.url");
    }

    static Scheduler scheduler(String url, String delegate, String instance, long checkin, int threads) throws Exception {
        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", "QuartzScheduler");
        p.setProperty("org.quartz.scheduler.instanceId", instance);
        p.setProperty("org.quartz.threadPool.class", "org.quartz.simpl.SimpleThreadPool");
        p.setProperty("org.quartz.threadPool.threadCount", String.valueOf(threads));
        p.setProperty("org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX");
        p.setProperty("org.quartz.jobStore.driverDelegateClass", delegate);
        p.setProperty("org.quartz.jobStore.dataSource", "rt");
        p.setProperty("org.quartz.jobStore.isClustered", "true");
        p.setProperty("org.quartz.jobStore.clusterCheckinInterval", String.valueOf(checkin));
        p.setProperty("org.quartz.jobStore.useProperties", System.getProperty("rt.useProperties", "false"));
        p.setProperty("org.quartz.jobStore.misfireThreshold", "600000");
        p.setProperty("org.quartz.scheduler.idleWaitTime", "1000");
        p.setProperty("org.quartz.dataSource.rt.connectionProvider.class", "realsys.Rt$Provider");
        p.setProperty("org.quartz.dataSource.rt.url", url);
        System.setProperty("rt.url", url);
        return new StdSchedulerFactory(p).getScheduler();
    }

    /** Connections straight from the driver: Quartz closes each one after its transaction. */
    public static class Provider implements ConnectionProvider {
        private String url;

        public void setUrl(String url) {
            this.url = url;
        }

        public Connection getConnection() throws SQLException {
            return DriverManager.getConnection(url);
        }

        public void shutdown() {}

        public void initialize() {}
    }

    static void ledger(JobExecutionContext ctx, String event) {
        JobDataMap m = ctx.getMergedJobDataMap();
        try (Connection c = DriverManager.getConnection(url());
             PreparedStatement ps = c.prepareStatement(
                     "INSERT INTO rt_ledger (job, node, event, recovering, orig_trigger, tval, at) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, ctx.getJobDetail().getKey().getName());
            ps.setString(2, ctx.getScheduler().getSchedulerInstanceId());
            ps.setString(3, event);
            ps.setInt(4, ctx.isRecovering() ? 1 : 0);
            ps.setString(5, m.getString(Scheduler.FAILED_JOB_ORIGINAL_TRIGGER_NAME));
            ps.setString(6, m.getString("tkey"));
            ps.setLong(7, System.currentTimeMillis());
            ps.executeUpdate();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** Writes 'start', sleeps sleep_ms, writes 'done'. */
    public static class LedgerJob implements Job {
        public void execute(JobExecutionContext ctx) {
            ledger(ctx, "start");
            try {
                Thread.sleep(ctx.getMergedJobDataMap().getLong("sleep_ms"));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ledger(ctx, "done");
        }
    }

    static void schedule(Scheduler s, String name, Class<? extends Job> job, boolean recovery, int priority, long sleep,
                         String tval) throws Exception {
        JobDetail jd = JobBuilder.newJob(job).withIdentity(name, "rt").requestRecovery(recovery)
                .usingJobData("sleep_ms", String.valueOf(sleep)).build();
        TriggerBuilder<Trigger> tb = TriggerBuilder.newTrigger().withIdentity(name, "rt").withPriority(priority).startNow();
        if (tval != null) {
            tb = tb.usingJobData("tkey", tval);
        }
        s.scheduleJob(jd, tb.withSchedule(SimpleScheduleBuilder.simpleSchedule()).build());
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] a) throws Exception {
        String url = a[1], delegate = a[2];
        switch (a[0]) {
            case "schedule": {
                Scheduler s = scheduler(url, delegate, "scheduler-client", 7500, 1);
                int n = Integer.parseInt(a[3]);
                long sleep = Long.parseLong(a[4]);
                schedule(s, "norecover", LedgerJob.class, false, 10, sleep, null);
                for (int i = 1; i <= n; i++) {
                    schedule(s, "job-" + i, LedgerJob.class, true, 5, sleep, "tval-" + i);
                }
                schedule(s, "gone", (Class<? extends Job>) Class.forName("realsys.GoneJob"), false, 5, 0, null);
                s.shutdown();
                break;
            }
            case "add": {
                Scheduler s = scheduler(url, delegate, "scheduler-client", 7500, 1);
                schedule(s, a[3], LedgerJob.class, true, 5, Long.parseLong(a[4]), null);
                s.shutdown();
                break;
            }
            case "node": {
                Scheduler s = scheduler(url, delegate, a[3], Long.parseLong(a[4]), Integer.parseInt(a[5]));
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        s.shutdown(true);
                    } catch (Exception e) {
                        e.printStackTrace();
                    }
                }));
                s.start();
                System.out.println("node " + a[3] + " started");
                Thread.currentThread().join();
                break;
            }
            default:
                throw new IllegalArgumentException(a[0]);
        }
    }
}
