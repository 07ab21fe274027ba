<?php
// qctl:dispatch KEY [--tries=N] [--sleep=S] [--queue=Q]: dispatches one LedgerJob with Laravel's own dispatcher.
use App\Jobs\LedgerJob;
use Illuminate\Support\Facades\Artisan;

Artisan::command('qctl:dispatch {key} {--tries=} {--sleep=0.2} {--queue=default}', function ($key) {
    $tries = $this->option('tries');
    $job = new LedgerJob($key, (float) $this->option('sleep'), $tries === null ? null : (int) $tries);
    dispatch($job->onQueue($this->option('queue')));
    $this->info("dispatched $key");
});
