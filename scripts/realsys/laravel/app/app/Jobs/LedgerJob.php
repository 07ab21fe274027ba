<?php
namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Illuminate\Support\Facades\DB;

// One run = one ledger row: started when handle() begins, finished when it returns. While the file named by
// QCTL_SLOW_FLAG exists the job sleeps for QCTL_SLOW_SECONDS (a worker to kill mid-job), else for $sleep.
class LedgerJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $key;
    public $sleep;

    public function __construct($key, $sleep, $tries = null)
    {
        $this->key = $key;
        $this->sleep = $sleep;
        if ($tries !== null) {
            $this->tries = $tries;
        }
    }

    public function handle()
    {
        $id = DB::table('ledger')->insertGetId([
            'job_key' => $this->key, 'pid' => getmypid(), 'attempt' => $this->attempts(),
            'started_at' => microtime(true),
        ]);
        $flag = getenv('QCTL_SLOW_FLAG');
        $slow = $flag && is_file($flag) && str_starts_with($this->key, 'slow');
        usleep((int) (1e6 * ($slow ? (float) getenv('QCTL_SLOW_SECONDS') : $this->sleep)));
        DB::table('ledger')->where('id', $id)->update(['finished_at' => microtime(true)]);
    }
}
