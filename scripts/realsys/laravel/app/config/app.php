<?php
return [
    'name' => 'qctl-roundtrip',
    'env' => 'production',
    'debug' => false,
    'timezone' => 'UTC',
    'key' => 'base64:'.base64_encode(str_repeat('q', 32)),
    'cipher' => 'AES-256-CBC',
    'providers' => [
        Illuminate\Bus\BusServiceProvider::class,
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Foundation\Providers\ConsoleSupportServiceProvider::class,
        Illuminate\Database\DatabaseServiceProvider::class,
        Illuminate\Encryption\EncryptionServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Queue\QueueServiceProvider::class,
    ],
    'aliases' => [
        'Artisan' => Illuminate\Support\Facades\Artisan::class,
        'DB' => Illuminate\Support\Facades\DB::class,
    ],
];
