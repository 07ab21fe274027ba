// A job class the first nodes run without (so Quartz sets its trigger to ERROR when it cannot load it), and a later
// node has on its class path (so the trigger qctl retries runs there). See Rt.java.
package realsys;

import org.quartz.Job;
import org.quartz.JobExecutionContext;

public class GoneJob implements Job {
    public void execute(JobExecutionContext ctx) {
        Rt.ledger(ctx, "start");
        Rt.ledger(ctx, "done");
    }
}
