<?php
// Laravel 8's config/queue.php, database connection only. retry_after is QCTL_RETRY_AFTER (the round trip sets it
// long, so that only qctl's reap --timeout frees a dead worker's reservations).
return [
    'default' => 'database',
    'connections' => [
        'database' => [
            'driver' => 'database',
            'table' => 'jobs',
            'queue' => 'default',
            'retry_after' => (int) (getenv('QCTL_RETRY_AFTER') ?: 90),
            'after_commit' => false,
        ],
    ],
    'failed' => [
        'driver' => 'database-uuids',
        'database' => 'mysql',
        'table' => 'failed_jobs',
    ],
];
