<?php
// QCTL_DB_* name the round trip's database (MariaDB/MySQL).
return [
    'default' => 'mysql',
    'connections' => [
        'mysql' => [
            'driver' => 'mysql',
            'host' => getenv('QCTL_DB_HOST') ?: '127.0.0.1',
            'port' => getenv('QCTL_DB_PORT') ?: '3306',
            'database' => getenv('QCTL_DB_NAME'),
            'username' => getenv('QCTL_DB_USER') ?: 'root',
            'password' => getenv('QCTL_DB_PASSWORD') ?: '',
            'charset' => 'utf8mb4',
            'collation' => 'utf8mb4_unicode_ci',
            'prefix' => '',
            'strict' => true,
        ],
    ],
    'migrations' => 'migrations',
];
